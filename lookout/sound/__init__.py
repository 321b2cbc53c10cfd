"""Sound: CESP 1.0 sound packs (validated as untrusted input), lookout's own generated pack, the
kind-to-category map, the debounce store and playing through the platform's player."""
