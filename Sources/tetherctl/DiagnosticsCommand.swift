import ArgumentParser
import TetherControl

/// `tetherctl diagnostics`: the report a remote `diagnostics` action sends to the server.
struct Diagnostics: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a diagnostics report (JSON): status, the last 200 events, the configuration without secrets.",
        discussion: """
            The report a remote diagnostics action sends to the server (docs/operations.md, "Remote actions"): \
            the agent's release, when it started and its uptime; the status as `tetherctl status --json` shows it; \
            the last 200 events; the running configuration with secrets removed (token_file, enrollment_key_file, ca_file \
            and hooks by path, never their contents; the server URL without user, password or query). Never row contents. \
            At most 256 KiB: the oldest events are left out until it fits, and events_omitted and note say so. \
            A reading command: members of the daemon's group may run it.
            """)
    @OptionGroup var options: GlobalOptions

    func run() throws {
        print(GlobalOptions.pretty(try options.send(ControlRequest(command: .diagnostics))))
    }
}
