import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The flood's `poll(2)` loop, owned by its thread alone (so its table of connections needs no lock).
final class FloodLoop: @unchecked Sendable {
    /// What one connection sends: its request at full speed, then a drip per interval.
    struct Request {
        var first: [UInt8]
        var drip: [UInt8]
    }

    /// One connection slot: what it sends, from where, and its socket when open.
    struct Slot {
        var request: Int
        var port: UInt16
        var source: in_addr_t
        var fd: Int32 = -1
        var connecting = false
        /// Whether it was opened before (opening it again takes one of the reopens a second).
        var used = false
        var offset = 0
        var reopenAt: ContinuousClock.Instant?
    }

    private let plan: LoopbackFlood.Plan
    private let wakeRead: Int32
    private var requests: [Request] = []
    private var slots: [Slot] = []
    private var buffer = [UInt8](repeating: 0, count: 16384)
    private let clock = ContinuousClock()
    /// Connections opened per pass of the loop at most (a listen backlog is a few hundred).
    private static let wave = 100

    init(plan: LoopbackFlood.Plan, wakeRead: Int32) {
        self.plan = plan
        self.wakeRead = wakeRead
        var index: [String: Int] = [:]
        let start = clock.now
        for k in 0..<plan.connections {
            let attack = plan.attacks[k % plan.attacks.count]
            let turn = k / plan.attacks.count
            let paths = attack.paths(plan.routes)
            let port = plan.ports[turn % plan.ports.count]
            let path = paths[(turn / plan.ports.count) % paths.count]
            let key = "\(attack.rawValue) \(path)"
            let request: Int
            if let known = index[key] {
                request = known
            } else {
                requests.append(Self.request(attack, path: path))
                request = requests.count - 1
                index[key] = request
            }
            let source = inet_addr(plan.sourceAddresses[k % plan.sourceAddresses.count])
            slots.append(Slot(request: request, port: port, source: source, reopenAt: start))
        }
    }

    func run(flood: LoopbackFlood) {
        let end = clock.now.advanced(by: plan.lasting)
        var nextDrip = clock.now.advanced(by: plan.dripInterval)
        var opens = 0
        // Reopens allowed now: a bucket refilled at `reopensPerSecond`, holding a second's worth.
        var reopens = Double(plan.reopensPerSecond)
        var refilled = clock.now
        while !flood.isStopped && clock.now < end {
            let now = clock.now
            let elapsed = refilled.duration(to: now).components
            reopens = min(Double(plan.reopensPerSecond), reopens + (Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18) * Double(plan.reopensPerSecond))
            refilled = now
            var waves = 0
            for i in slots.indices where slots[i].fd < 0 && waves < Self.wave && opens < plan.maxOpens {
                guard let at = slots[i].reopenAt, at <= now, !slots[i].used || reopens >= 1 else { continue }
                if slots[i].used { reopens -= 1 }
                open(i, flood: flood)
                opens += 1
                waves += 1
            }
            if now >= nextDrip {
                nextDrip = now.advanced(by: plan.dripInterval)
                for i in slots.indices where slots[i].fd >= 0 && !slots[i].connecting && slots[i].offset >= requests[slots[i].request].first.count {
                    send(i, requests[slots[i].request].drip, flood: flood)
                }
            }
            var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            var polled: [Int] = []
            for i in slots.indices where slots[i].fd >= 0 {
                let sending = slots[i].connecting || slots[i].offset < requests[slots[i].request].first.count
                fds.append(pollfd(fd: slots[i].fd, events: Int16(POLLIN) | (sending ? Int16(POLLOUT) : 0), revents: 0))
                polled.append(i)
            }
            // Short while connections wait to be opened, else until the next drip.
            let waiting = waves == Self.wave
            let ready = poll(&fds, nfds_t(fds.count), waiting ? 5 : 100)
            if ready < 0 && errno != EINTR { break }
            if ready <= 0 { continue }
            if fds[0].revents != 0 { _ = read(wakeRead, &buffer, buffer.count) }
            for (position, i) in polled.enumerated() {
                let events = fds[position + 1].revents
                guard events != 0, slots[i].fd >= 0 else { continue }
                if slots[i].connecting {
                    guard events & (Int16(POLLOUT) | Int16(POLLERR) | Int16(POLLHUP)) != 0 else { continue }
                    var error: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(slots[i].fd, SOL_SOCKET, SO_ERROR, &error, &length)
                    guard error == 0 else {
                        drop(i, connected: false, flood: flood)
                        continue
                    }
                    slots[i].connecting = false
                    flood.update { $0.open += 1 }
                }
                if events & Int16(POLLOUT) != 0 { sendFirst(i, flood: flood) }
                if slots[i].fd >= 0, events & (Int16(POLLIN) | Int16(POLLERR) | Int16(POLLHUP)) != 0 { receive(i, flood: flood) }
            }
        }
        for i in slots.indices where slots[i].fd >= 0 {
            close(slots[i].fd)
            if !slots[i].connecting { flood.update { $0.open -= 1 } }
            slots[i].fd = -1
        }
    }

    /// A non-blocking connect from the slot's source address.
    private func open(_ i: Int, flood: LoopbackFlood) {
        slots[i].reopenAt = nil
        slots[i].offset = 0
        slots[i].used = true
        flood.update { $0.opened += 1 }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else {
            flood.update { $0.connectFailed += 1 }
            slots[i].reopenAt = clock.now.advanced(by: .seconds(1))
            return
        }
        // The port is chosen at connect, per destination: every source address has its own range.
        var yes: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_IP), 24 /* IP_BIND_ADDRESS_NO_PORT */, &yes, socklen_t(MemoryLayout<Int32>.size))
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = slots[i].source
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = slots[i].port.bigEndian
        remote.sin_addr.s_addr = inet_addr("127.0.0.1")
        let size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) } }
        let connected = bound == 0
            ? withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, size) } } : -1
        guard connected == 0 || errno == EINPROGRESS else {
            close(fd)
            flood.update { $0.connectFailed += 1 }
            slots[i].reopenAt = clock.now.advanced(by: .seconds(1))
            return
        }
        slots[i].fd = fd
        slots[i].connecting = true
    }

    /// Sends what fits of the slot's first request.
    private func sendFirst(_ i: Int, flood: LoopbackFlood) {
        let first = requests[slots[i].request].first
        guard slots[i].offset < first.count else { return }
        let sent = first[slots[i].offset...].withUnsafeBytes {
            Glibc.send(slots[i].fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
        }
        if sent < 0 {
            if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR { drop(i, connected: true, flood: flood) }
            return
        }
        slots[i].offset += sent
        let delivered = slots[i].offset >= first.count
        flood.update {
            $0.bytesSent += sent
            if delivered { $0.delivered += 1 }
        }
    }

    /// One drip; what does not fit now is skipped (a slow client, not a fast one).
    private func send(_ i: Int, _ bytes: [UInt8], flood: LoopbackFlood) {
        guard !bytes.isEmpty else { return }
        let sent = bytes.withUnsafeBytes { Glibc.send(slots[i].fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
        if sent > 0 { flood.update { $0.bytesSent += sent } }
        if sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR { drop(i, connected: true, flood: flood) }
    }

    /// Reads and forgets what the server sent; the end of the stream closes the slot.
    private func receive(_ i: Int, flood: LoopbackFlood) {
        let count = buffer.withUnsafeMutableBytes { recv(slots[i].fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if count > 0 || (count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) { return }
        drop(i, connected: true, flood: flood)
    }

    /// Closes the slot's socket; it is opened again a second later (if the plan allows more).
    private func drop(_ i: Int, connected: Bool, flood: LoopbackFlood) {
        close(slots[i].fd)
        let wasOpen = !slots[i].connecting
        slots[i].fd = -1
        slots[i].connecting = false
        slots[i].reopenAt = clock.now.advanced(by: .seconds(1))
        flood.update {
            if connected && wasOpen {
                $0.closedByServer += 1
                $0.open -= 1
            } else {
                $0.connectFailed += 1
            }
        }
    }

    /// The bytes of `attack` on `path`.
    static func request(_ attack: LoopbackFlood.Attack, path: String) -> Request {
        let host = "Host: 127.0.0.1\r\nUser-Agent: tether-flood\r\n"
        let upgrade = "GET \(path) HTTP/1.1\r\n\(host)Upgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        let mask: [UInt8] = [0x11, 0x22, 0x33, 0x44]
        switch attack {
        case .slowHeaders:
            return Request(first: Array("GET \(path) HTTP/1.1\r\n\(host)".utf8), drip: Array("X-Slow: 1\r\n".utf8))
        case .slowBody:
            let head = "POST \(path) HTTP/1.1\r\n\(host)Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 16777216\r\n\r\n"
            return Request(first: Array(head.utf8), drip: [UInt8(ascii: "a")])
        case .oversizedHead:
            let line = "X-Padding: " + String(repeating: "a", count: 1011) + "\r\n"  // 1 KiB a line
            let head = "GET \(path) HTTP/1.1\r\n\(host)" + String(repeating: line, count: 72)
            return Request(first: Array(head.utf8), drip: Array(line.utf8))
        case .unboundUpgrade:
            return Request(first: Array(upgrade.utf8), drip: [0x89, 0x80] + mask)  // a masked, empty ping
        case .signInBody:
            let body = "user=admin&password=" + String(repeating: "a", count: 60_000 - 20)
            let head = "POST \(path) HTTP/1.1\r\n\(host)Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 65000\r\n\r\n"
            return Request(first: Array((head + body).utf8), drip: [UInt8(ascii: "a")])
        case .partialFrame:
            var frame: [UInt8] = [0x82, 0x80 | 127]
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8((UInt64(16 << 20) >> UInt64(shift)) & 0xFF)) }
            return Request(first: Array(upgrade.utf8) + frame + mask + [UInt8](repeating: 0x5A, count: 8192), drip: [0x5A])
        }
    }
}
