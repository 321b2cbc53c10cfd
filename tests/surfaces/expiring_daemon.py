"""A notification daemon that has actions but closes every notification as expired after a
fixed time, whatever expire_timeout it was asked for (argv[1], seconds): what a daemon that
ignores the spec's "never expires" (0) does, for the re-post tests. CloseNotification closes at
once (reason 3).

Run by the system python3 (Debian python3-dbus and python3-gi), not the test venv."""

import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

IFACE = "org.freedesktop.Notifications"
EXPIRE_MS = int(float(sys.argv[1]) * 1000)


class Daemon(dbus.service.Object):
    def __init__(self, bus):
        super().__init__(bus, "/org/freedesktop/Notifications")
        self.next_id = 1
        self.timers = {}

    @dbus.service.method(IFACE, out_signature="as")
    def GetCapabilities(self):
        return ["actions", "body"]

    @dbus.service.method(IFACE, out_signature="ssss")
    def GetServerInformation(self):
        return ("expiring-daemon", "lookout-tests", "1.0", "1.2")

    @dbus.service.method(IFACE, in_signature="susssasa{sv}i", out_signature="u")
    def Notify(self, app, replaces_id, icon, summary, body, actions, hints, timeout):
        nid = int(replaces_id) if replaces_id in self.timers else self.next_id
        if nid == self.next_id:
            self.next_id += 1
        old = self.timers.pop(nid, None)
        if old is not None:
            GLib.source_remove(old)
        self.timers[nid] = GLib.timeout_add(EXPIRE_MS, self._expire, nid)
        return nid

    def _expire(self, nid):
        if self.timers.pop(nid, None) is not None:
            self.NotificationClosed(nid, 1)
        return False

    @dbus.service.method(IFACE, in_signature="u")
    def CloseNotification(self, notification_id):
        timer = self.timers.pop(int(notification_id), None)
        if timer is not None:
            GLib.source_remove(timer)
            self.NotificationClosed(notification_id, 3)

    @dbus.service.signal(IFACE, signature="uu")
    def NotificationClosed(self, notification_id, reason):
        pass

    @dbus.service.signal(IFACE, signature="us")
    def ActionInvoked(self, notification_id, action_key):
        pass


dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
session = dbus.SessionBus()
name = dbus.service.BusName(IFACE, session)
daemon = Daemon(session)
GLib.MainLoop().run()
