import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy on a loopback port in front of another loopback port. It counts the bytes passing
/// each way (wire bytes between a device and the server, headers and WebSocket frames included)
/// and can hold each direction to a rate, so a test sees a transfer in flight whatever the
/// machine's speed, with a file small enough to spare the disk.
public final class LoopbackProxy: @unchecked Sendable {
    /// The port it forwards to.
    public let target: Int
    /// The port it listens on (after `start()`).
    public private(set) var port = 0
    private let lock = NSLock()
    private var up = 0, down = 0
    private var rate: (up: Int?, down: Int?) = (nil, nil)
    /// When each direction's shared allowance is next free (rate-limited directions only).
    private var nextFree: (up: Date, down: Date) = (.distantPast, .distantPast)
    private var listener: Int32 = -1
    /// Open connections: both sockets, and how many of its two pumps still run.
    private var connections: [Int32: (peer: Int32, pumps: Int)] = [:]
    private var stopped = false, refusing = false, holding = false
    private var holdMarker: [UInt8]?

    public init(target: Int) { self.target = target }

    /// `http://127.0.0.1:PORT` of the proxy.
    public var url: String { "http://127.0.0.1:\(port)" }

    /// Bytes passed so far: `up` from the client to the target, `down` back.
    public var bytes: (up: Int, down: Int) { lock.lock(); defer { lock.unlock() }; return (up, down) }
    public func reset() { lock.lock(); up = 0; down = 0; lock.unlock() }

    /// Holds each direction (over all connections together) to at most so many bytes a second;
    /// `nil` lifts the limit. Takes effect for bytes not yet forwarded.
    public func limit(up: Int?, down: Int?) {
        lock.lock()
        rate = (up, down)
        nextFree = (.distantPast, .distantPast)
        lock.unlock()
    }

    /// Starts listening on a free loopback port.
    public func start() throws {
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = Self.loopback(0)
        guard withUnsafePointer(to: &addr, { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }) == 0,
              listen(listener, 64) == 0 else { throw POSIXError(.EADDRINUSE) }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(listener, $0, &len) } }
        port = Int(UInt16(bigEndian: addr.sin_port))
        let l = listener
        // This thread owns the listening socket and closes it when it ends: were `stop()` to
        // close it, the number could go to another socket of the process (another test's
        // server) before this thread's next `accept`, which would then take that server's
        // connections.
        Thread { [self] in
            defer { close(l) }
            while true {
                let c = accept(l, nil, nil)
                if c < 0 {
                    if errno == EINTR || errno == ECONNABORTED { continue }
                    return
                }
                guard let s = Self.connected(port: target) else { close(c); continue }
                for fd in [c, s] { var one: Int32 = 1; setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size)) }
                lock.lock()
                if stopped { lock.unlock(); close(c); close(s); return }
                if refusing { lock.unlock(); close(c); close(s); continue }
                connections[c] = (s, 2)
                lock.unlock()
                pump(from: c, to: s, upstream: true, connection: c)
                pump(from: s, to: c, upstream: false, connection: c)
            }
        }.start()
    }

    /// Stops listening and cuts every connection.
    /// Its sockets are shut down here and closed by the threads that use them (see `start`).
    public func stop() {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        stopped = true
        shutdown(listener, Int32(SHUT_RDWR))  // wakes the accept thread, which closes it
        cutLocked()
    }

    /// Shuts down every open connection; the caller holds the lock (a pump closes its
    /// sockets only after it has taken the connection out under the lock, so none of these
    /// numbers can belong to another socket yet).
    private func cutLocked() {
        for (c, v) in connections { shutdown(c, Int32(SHUT_RDWR)); shutdown(v.peer, Int32(SHUT_RDWR)) }
    }

    /// Holds back every byte from the target while true (requests reach the server, answers wait):
    /// as a connection lost after the server did the work but before the answer came back.
    public func holdAnswers(_ on: Bool) { lock.lock(); holding = on; lock.unlock() }

    /// Starts holding answers (see `holdAnswers`) once a request containing `marker` (e.g.
    /// `"/commits"`) has passed on its way to the target.
    public func holdAnswers(after marker: String) { lock.lock(); holdMarker = Array(marker.utf8); lock.unlock() }

    private var isHolding: Bool { lock.lock(); defer { lock.unlock() }; return holding && !stopped }

    private func arm(_ bytes: ArraySlice<UInt8>) {
        lock.lock()
        defer { lock.unlock() }
        guard let m = holdMarker, bytes.count >= m.count else { return }
        for i in bytes.startIndex...(bytes.endIndex - m.count) where bytes[i] == m[0] && bytes[i..<i + m.count].elementsEqual(m) {
            holding = true
            holdMarker = nil
            return
        }
    }

    /// Refuses new connections (closes them at once) while true, as an unreachable server would.
    public func refuse(_ on: Bool) { lock.lock(); refusing = on; lock.unlock() }

    /// Cuts every open connection (as a network drop would) and goes on listening.
    public func cut() {
        lock.lock()
        defer { lock.unlock() }
        cutLocked()
    }

    deinit { stop() }

    private func pump(from a: Int32, to b: Int32, upstream: Bool, connection: Int32) {
        Thread { [self] in
            var buf = [UInt8](repeating: 0, count: 256 * 1024)
            while true {
                // Small reads while limited, so the pace is smooth.
                let limited = (upstream ? currentRate.up : currentRate.down) != nil
                let n = buf.withUnsafeMutableBytes { recv(a, $0.baseAddress, limited ? 16 * 1024 : $0.count, 0) }
                if n <= 0 { break }
                if upstream { arm(buf[0..<n]) }
                while !upstream && isHolding { usleep(5_000) }
                if let wait = account(n, upstream: upstream), wait > 0 { usleep(useconds_t(min(wait, 1) * 1_000_000)) }
                var off = 0
                while off < n {
                    let w = buf.withUnsafeBytes { send(b, $0.baseAddress! + off, n - off, Int32(MSG_NOSIGNAL)) }
                    if w <= 0 { break }
                    off += w
                }
            }
            shutdown(b, Int32(SHUT_WR))
            shutdown(a, Int32(SHUT_RD))
            lock.lock()
            connections[connection]?.pumps -= 1
            let last = connections[connection]?.pumps == 0
            if last { connections[connection] = nil }
            lock.unlock()
            if last { close(a); close(b) }  // the second pump of a connection closes it
        }.start()
    }

    private var currentRate: (up: Int?, down: Int?) { lock.lock(); defer { lock.unlock() }; return rate }

    /// Counts `n` bytes and returns how long to wait before forwarding them, if limited.
    private func account(_ n: Int, upstream: Bool) -> TimeInterval? {
        lock.lock()
        defer { lock.unlock() }
        if upstream { up += n } else { down += n }
        guard let r = upstream ? rate.up : rate.down, r > 0 else { return nil }
        let now = Date()
        let start = max(now, upstream ? nextFree.up : nextFree.down)
        let free = start.addingTimeInterval(Double(n) / Double(r))
        if upstream { nextFree.up = free } else { nextFree.down = free }
        return free.timeIntervalSince(now)
    }

    /// A TCP socket connected to the loopback `port`, or nil (the caller closes it).
    public static func connected(port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var addr = loopback(port)
        guard withUnsafePointer(to: &addr, { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }) == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    static func loopback(_ port: Int) -> sockaddr_in {
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = in_port_t(UInt16(port).bigEndian)
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        return a
    }
}
