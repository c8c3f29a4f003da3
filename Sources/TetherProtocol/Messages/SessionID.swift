/// Identifies one partition's session on a connection. Chosen by the client; several
/// sessions are multiplexed over one WebSocket connection.
package typealias SessionID = UInt32
