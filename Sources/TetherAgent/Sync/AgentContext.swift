import Foundation
import Logging
import TetherSyncClient
import TetherProtocol

/// What every partition controller shares: the agent's state database, the current server
/// connection, the token, and how to report status changes.
protocol AgentContext: Sendable {
    var stateDatabase: AgentStateDatabase { get }
    var logger: Logger { get }
    func configuration() async -> AgentConfiguration
    /// A fresh session id on the current connection.
    func nextSessionID() async -> SessionID
    /// The token from `[server] token_file`, read anew (errors 202/203 make it re-read).
    func readToken() async throws -> String
    /// The server refused a bind's `token` (203): the next bind may offer an earlier
    /// credential of the device (``CredentialFallback``).
    func credentialRefused(_ token: String) async
    /// The server accepted a bind's `token`: an earlier credential it knows the device by
    /// becomes the token file's again.
    func credentialAccepted(_ token: String) async
    /// A controller's status changed (STATUS=, wait-synced). Does not wait: it only signals
    /// the agent's status task.
    func statusChanged()
    /// A connection-level error the whole agent must follow (105 stops syncing).
    func connectionFailed(_ error: SyncError) async
    /// The server-state fetcher of step 4 of a reset.
    var fetcher: any ServerStateFetcher { get }
    /// The heal contributor of a reset caused by a restored server.
    var healer: any HealContributor { get }
    /// When a repeated client reset waits, and when a loop becomes manual.
    var resetLoopLimits: ResetLoopGuard.Limits { get }
    /// Where events go (`tetherctl events`, the error hook).
    var events: AgentEvents { get }
}
