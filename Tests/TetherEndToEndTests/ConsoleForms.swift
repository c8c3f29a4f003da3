import Foundation
import Glibc
import TetherTestSupport

/// The web console driven as a browser would over plain HTTP/1.1 on loopback: sign in with the
/// admin token (the session cookie), read a page's CSRF token, and post its forms.
struct ConsoleForms {
    let port: UInt16
    let cookie: String
    let csrf: String

    /// Signs in with `token` and reads the CSRF token from the devices page.
    static func signIn(port: UInt16, token: String) throws -> ConsoleForms {
        let answer = try request(port: port, "POST", "/console/sign-in", form: ["token": token])
        guard let cookie = answer.head.split(separator: "\r\n").lazy.compactMap({ line -> String? in
            guard line.lowercased().hasPrefix("set-cookie:") else { return nil }
            return line.dropFirst("set-cookie:".count).split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) }
        }).first else { throw TestSupportError("no session cookie from the sign-in: \(answer.head)") }
        let page = try request(port: port, "GET", "/console/devices", cookie: cookie)
        guard let range = page.body.range(of: #"name="csrf" value="([^"]+)""#, options: .regularExpression) else {
            throw TestSupportError("no CSRF token on /console/devices (\(page.status))")
        }
        let csrf = page.body[range].split(separator: "\"").dropFirst(3).first.map(String.init) ?? ""
        return ConsoleForms(port: port, cookie: cookie, csrf: csrf)
    }

    /// Posts a console form with the session's CSRF token: the page answered.
    func post(_ path: String, _ fields: [String: String]) throws -> (status: Int, body: String) {
        let answer = try Self.request(port: port, "POST", path, form: fields.merging(["csrf": csrf]) { a, _ in a }, cookie: cookie)
        return (answer.status, answer.body)
    }

    /// One request (`Connection: close`): status, head and body.
    static func request(
        port: UInt16, _ method: String, _ path: String, form: [String: String]? = nil, cookie: String? = nil
    ) throws -> (status: Int, head: String, body: String) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError("socket failed") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw TestSupportError("connect to 127.0.0.1:\(port) failed") }
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        let body = (form ?? [:]).sorted { $0.key < $1.key }.map {
            "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")"
        }.joined(separator: "&")
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\nOrigin: http://127.0.0.1:\(port)\r\n"
        if let cookie { text += "Cookie: \(cookie)\r\n" }
        if form != nil { text += "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n" }
        text += "\r\n" + body
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            answer += chunk[0..<n]
            if HTTPGet.isComplete(answer) { break }
        }
        let reply = String(decoding: answer, as: UTF8.self)
        guard let split = reply.range(of: "\r\n\r\n"), let status = Int(reply.split(separator: " ").dropFirst().first ?? "") else {
            throw TestSupportError("no HTTP answer to \(method) \(path): \(reply.prefix(200))")
        }
        return (status, String(reply[..<split.lowerBound]), String(reply[split.upperBound...]))
    }
}
