"""A notification daemon that has no actions, like the servers notify-send's fallback is for: it
owns org.freedesktop.Notifications on the session bus and lists no "actions" capability.

Run by the system python3 (Debian python3-dbus and python3-gi), not the test venv."""

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

IFACE = "org.freedesktop.Notifications"


class Daemon(dbus.service.Object):
    def __init__(self, bus):
        super().__init__(bus, "/org/freedesktop/Notifications")
        self.next_id = 1

    @dbus.service.method(IFACE, out_signature="as")
    def GetCapabilities(self):
        return ["body"]

    @dbus.service.method(IFACE, out_signature="ssss")
    def GetServerInformation(self):
        return ("plain-daemon", "lookout-tests", "1.0", "1.2")

    @dbus.service.method(IFACE, in_signature="susssasa{sv}i", out_signature="u")
    def Notify(self, app, replaces_id, icon, summary, body, actions, hints, timeout):
        if replaces_id:
            return replaces_id
        self.next_id += 1
        return self.next_id - 1

    @dbus.service.method(IFACE, in_signature="u")
    def CloseNotification(self, notification_id):
        self.NotificationClosed(notification_id, 3)

    @dbus.service.signal(IFACE, signature="uu")
    def NotificationClosed(self, notification_id, reason):
        pass


dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
session = dbus.SessionBus()
name = dbus.service.BusName(IFACE, session)
daemon = Daemon(session)
GLib.MainLoop().run()
