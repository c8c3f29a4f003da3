import Foundation

/// The admin API's form of a heal record: snake_case keys, times as RFC 3339 text (whatever
/// date strategy the encoder has), so `admin status --json` reads the same from every client.
extension HealRecord {
    enum CodingKeys: String, CodingKey {
        case partition, mode, origin, devices
        case restoredTo = "restored_to"
        case lostUntil = "lost_until"
        case healedTo = "healed_to"
        case healedChanges = "healed_changes"
        case windowKnown = "window_known"
        case openedAt = "opened_at"
        case closedAt = "closed_at"
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func date(_ key: CodingKeys) throws -> Date? {
            guard let text = try c.decodeIfPresent(String.self, forKey: key) else { return nil }
            guard let date = try? Date(text, strategy: .iso8601) else {  // the error thrown below names the key
                throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "\(text.debugDescription) is not an RFC 3339 time")
            }
            return date
        }
        self.init(
            partition: try c.decode(String.self, forKey: .partition), mode: try c.decode(Mode.self, forKey: .mode),
            origin: try c.decode(Origin.self, forKey: .origin), restoredTo: try c.decode(Int64.self, forKey: .restoredTo),
            lostUntil: try c.decode(Int64.self, forKey: .lostUntil), healedTo: try c.decode(Int64.self, forKey: .healedTo),
            devices: try c.decode(Int.self, forKey: .devices), healedChanges: try c.decode(Int64.self, forKey: .healedChanges),
            windowKnown: try c.decode(Bool.self, forKey: .windowKnown), openedAt: try date(.openedAt) ?? Date(timeIntervalSince1970: 0),
            closedAt: try date(.closedAt))
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(partition, forKey: .partition)
        try c.encode(mode, forKey: .mode)
        try c.encode(origin, forKey: .origin)
        try c.encode(restoredTo, forKey: .restoredTo)
        try c.encode(lostUntil, forKey: .lostUntil)
        try c.encode(healedTo, forKey: .healedTo)
        try c.encode(devices, forKey: .devices)
        try c.encode(healedChanges, forKey: .healedChanges)
        try c.encode(windowKnown, forKey: .windowKnown)
        try c.encode(openedAt.formatted(.iso8601), forKey: .openedAt)
        try c.encode(closedAt?.formatted(.iso8601), forKey: .closedAt)
    }
}
