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
        return settings
    }
}
