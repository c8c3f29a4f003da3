import Foundation
import TetherControl
import TetherTOML

/// Shell completion of partition names (`tetherctl pause <TAB>`): the running agent's
/// partitions, asked on its control socket; when it does not answer within a second, the
/// `[[partition]]` names of its configuration file. The socket and the file are the ones the
/// command line names (`--socket`, `--config`), as for the command itself.
enum PartitionCompletion {
    static func names(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        let config = value(of: "--config", in: words)
        let fromAgent = agentPartitions(socket: socket(words, config: config))
        let names = fromAgent ?? configuredPartitions(config ?? "/etc/tether/tetherd.toml")
        return names.filter { $0.hasPrefix(prefix) }.sorted()
    }

    /// The word after `option` (`--config FILE`), or after `option=`.
    static func value(of option: String, in words: [String]) -> String? {
        for (i, word) in words.enumerated() {
            if word == option, i + 1 < words.count { return words[i + 1] }
            if word.hasPrefix(option + "=") { return String(word.dropFirst(option.count + 1)) }
        }
        return nil
    }

    static func socket(_ words: [String], config: String?) -> String {
        if let socket = value(of: "--socket", in: words) { return socket }
        // Unreadable or invalid (both lines): the next place the socket may come from.
        if let config, let text = try? String(contentsOfFile: config, encoding: .utf8),
            let parser = try? ConfigParser(text: text, file: config), let socket = parser.root.absolutePath("control_socket")
        {
            return socket
        }
        if let socket = ProcessInfo.processInfo.environment["TETHER_SOCKET"], !socket.isEmpty { return socket }
        return GlobalOptions.defaultSocket
    }

    static func agentPartitions(socket: String) -> [String]? {
        // No answer (no daemon, an old one): nil, and the configured names complete.
        guard let response = try? ControlClient(socketPath: socket, timeout: .seconds(1)).send(ControlRequest(command: .status)),
            response.ok, let partitions = response.result?["partitions"]?.arrayValue
        else { return nil }
        return partitions.compactMap { $0["name"]?.stringValue }
    }

    static func configuredPartitions(_ path: String) -> [String] {
        // Unreadable or invalid: no names to complete.
        guard let text = try? String(contentsOfFile: path, encoding: .utf8), let parser = try? ConfigParser(text: text, file: path) else {
            return []
        }
        return parser.root.tables("partition").compactMap { $0.string("name") }
    }
}
