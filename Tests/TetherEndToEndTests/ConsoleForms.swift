import Foundation
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

    /// One request with the console's headers (its own origin, the session cookie, a form):
    /// status, head and body.
    static func request(
        port: UInt16, _ method: String, _ path: String, form: [String: String]? = nil, cookie: String? = nil
    ) throws -> (status: Int, head: String, body: String) {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        let body = (form ?? [:]).sorted { $0.key < $1.key }.map {
            "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")"
        }.joined(separator: "&")
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\nOrigin: http://127.0.0.1:\(port)\r\n"
        if let cookie { text += "Cookie: \(cookie)\r\n" }
        if form != nil { text += "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n" }
        return try HTTPGet.exchange(port: port, text + "\r\n" + body)
    }
}
