/// The first byte of every message. Client messages have the high bit clear, server
/// messages set.
package enum MessageType: UInt8, Sendable, CaseIterable {
    case hello = 0x01
    case bind = 0x02
    case upload = 0x03
    case unbind = 0x04
    case ping = 0x05
    case credit = 0x06
    case heal = 0x07
    case report = 0x08
    case credentialAccepted = 0x09
    case actionResult = 0x0a

    case welcome = 0x81
    case bound = 0x82
    case state = 0x83
    case download = 0x84
    case unbound = 0x85
    case pong = 0x86
    case error = 0x87
    case healed = 0x88
    case stateFile = 0x89
    case stateFileDeflated = 0x8a
    case credential = 0x8b
    case action = 0x8c
    case compensatingWrites = 0x8d
    case subscriptionChunk = 0x8e

    /// `TTHR`: the first bytes of a hello body, so that a client of something else is told apart.
    static let helloMagic: [UInt8] = [0x54, 0x54, 0x48, 0x52]
}
