import Foundation

/// The folders of one module, read as text, and which of them use which: a folder uses another
/// when one of its files names a type declared at the top level of the other's files (comments
/// and string literals left out). A layering lists the folders from the top down; a folder may
/// use only folders below it, so the module's parts depend one way (docs/architecture.md).
package struct SourceLayering: Sendable {
    /// One use against the layering: `from` names `type`, declared in `to`, in `file`.
    package struct Violation: Sendable, Hashable, CustomStringConvertible {
        package var from: String
        package var to: String
        package var type: String
        package var file: String
        package var description: String { "\(from) → \(to): \(file) names \(type)" }
    }

    /// Each folder's files, stripped of comments and string literals.
    private let files: [(folder: String, name: String, text: String)]
    /// Each top-level type and the folder that declares it.
    private let declarations: [String: String]

    /// Reads the folders of `module` (a directory of `Sources/`, found from this file's path).
    package init(module: String) throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let root = sources.appendingPathComponent(module)
        var files: [(folder: String, name: String, text: String)] = []
        let manager = FileManager.default
        for folder in try manager.contentsOfDirectory(atPath: root.path).sorted() {
            let directory = root.appendingPathComponent(folder)
            guard let names = try? manager.contentsOfDirectory(atPath: directory.path) else { continue }  // a file, not a folder
            for name in names.sorted() where name.hasSuffix(".swift") {
                let text = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
                files.append((folder, name, Self.code(of: text)))
            }
        }
        var declarations: [String: String] = [:]
        let declaration = /^(?:(?:public|internal|package|private|fileprivate|final|indirect)\s+)*(?:struct|enum|class|actor|protocol|typealias)\s+(\w+)/.anchorsMatchLineEndings()
        for file in files {
            for match in file.text.matches(of: declaration) { declarations[String(match.output.1)] = file.folder }
        }
        self.files = files
        self.declarations = declarations
    }

    /// The folders found (each holds at least one Swift file).
    package var folders: Set<String> { Set(files.map(\.folder)) }

    /// Every use of a folder not below the user in `layers` (top first; folders of one layer
    /// may not use each other), and every folder `layers` does not place.
    package func violations(layers: [[String]]) -> (violations: [Violation], unplaced: Set<String>) {
        var rank: [String: Int] = [:]
        for (index, layer) in layers.enumerated() { for folder in layer { rank[folder] = index } }
        var found: [Violation] = []
        for file in files {
            let words = Set(file.text.split { !($0.isLetter || $0.isNumber || $0 == "_") }.map(String.init))
            for word in words.sorted() {
                guard let owner = declarations[word], owner != file.folder else { continue }
                guard let from = rank[file.folder], let to = rank[owner], from < to else {
                    found.append(Violation(from: file.folder, to: owner, type: word, file: file.name))
                    continue
                }
            }
        }
        return (found, folders.subtracting(rank.keys))
    }

    /// `text` without comments and string literals (their words are not uses; what a string
    /// interpolates is left out too).
    package static func code(of text: String) -> String {
        enum Mode { case code, lineComment, blockComment(depth: Int), string(multiline: Bool) }
        var mode = Mode.code
        var code = ""
        let characters = Array(text)
        var index = 0
        func next(_ offset: Int) -> Character? { index + offset < characters.count ? characters[index + offset] : nil }
        while index < characters.count {
            let character = characters[index]
            switch mode {
            case .code:
                if character == "/" && next(1) == "/" {
                    mode = .lineComment
                } else if character == "/" && next(1) == "*" {
                    mode = .blockComment(depth: 1)
                    index += 1
                } else if character == "\"" {
                    let multiline = next(1) == "\"" && next(2) == "\""
                    mode = .string(multiline: multiline)
                    if multiline { index += 2 }
                } else {
                    code.append(character)
                }
            case .lineComment:
                if character == "\n" {
                    code.append(character)
                    mode = .code
                }
            case .blockComment(let depth):
                if character == "*" && next(1) == "/" {
                    mode = depth == 1 ? .code : .blockComment(depth: depth - 1)
                    index += 1
                } else if character == "/" && next(1) == "*" {
                    mode = .blockComment(depth: depth + 1)
                    index += 1
                }
            case .string(let multiline):
                if character == "\\" {
                    index += 1
                } else if character == "\"" && (!multiline || (next(1) == "\"" && next(2) == "\"")) {
                    if multiline { index += 2 }
                    mode = .code
                } else if character == "\n" && !multiline {
                    mode = .code  // not a string after all (a stray quote): never swallow the file
                }
            }
            index += 1
        }
        return code
    }
}
