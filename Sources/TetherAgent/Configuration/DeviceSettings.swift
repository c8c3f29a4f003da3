import Foundation
import TetherProtocol
import TetherTOML

/// `[device]` of `tetherd.toml`: how this device is known in the server's device ledger
/// (docs/server.md, "Device ledger") and how often it tells the server of its partitions.
package struct DeviceSettings: Sendable, Hashable {
    /// `name`: what operators see (`tether-server admin devices`); default the host name.
    package var name: String
    /// `report_interval_seconds`: at most one report of changed partitions this often
    /// (default 10); every partition is reported again at least every 10 minutes.
    package var reportIntervalSeconds = 10
    /// `name` when the file sets it: the name enrollment asks for (nil: the server picks one,
    /// so that clones of one image, which share a host name, do not ask for the same).
    package var configuredName: String? = nil
    /// `remote_actions`: the remote actions an operator may ask of this device from the server
    /// (docs/operations.md "Remote actions"); default all but `pause`, `[]` none. Read at each
    /// action and report, so a reload applies it.
    package var remoteActions: [RemoteActionKind] = RemoteActionKind.acceptedByDefault

    package init(name: String = DeviceSettings.hostName) {
        self.name = name
    }

    /// The host name, or `unknown` where it cannot be read.
    package static var hostName: String {
        let name = ProcessInfo.processInfo.hostName
        let cleaned = String(name.unicodeScalars.filter { DeviceReport.isDisplayable(String($0)) }.prefix(255))
        return cleaned.isEmpty ? "unknown" : cleaned
    }

    static func parse(_ table: ConfigTable?) -> DeviceSettings {
        var settings = DeviceSettings()
        guard let table else { return settings }
        if let name = table.string("name") {
            if name.isEmpty || name.utf8.count > ProtocolLimits.maxDeviceNameBytes || !DeviceReport.isDisplayable(name) {
                table.problem("name", "a device name must be 1 to 255 bytes without control characters")
            } else {
                settings.name = name
                settings.configuredName = name
            }
        }
        if let seconds = table.integer("report_interval_seconds", range: 1...3600) { settings.reportIntervalSeconds = seconds }
        if let names = table.stringArray("remote_actions") { settings.remoteActions = parseRemoteActions(names, table) }
        return settings
    }

    /// The kinds `remote_actions` lists, each once, in the documentation's order; an unknown
    /// name is a problem at its index (the default is kept when there is one).
    private static func parseRemoteActions(_ names: [String], _ table: ConfigTable) -> [RemoteActionKind] {
        var kinds: Set<RemoteActionKind> = []
        var valid = true
        for (index, name) in names.enumerated() {
            let kind = RemoteActionKind(rawValue: name)
            guard kind.isKnown else {
                let known = RemoteActionKind.all.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
                table.problem("remote_actions[\(index)]", "\(name.debugDescription) is not a remote action (one of \(known))")
                valid = false
                continue
            }
            kinds.insert(kind)
        }
        return valid ? RemoteActionKind.all.filter(kinds.contains) : RemoteActionKind.acceptedByDefault
    }
}
