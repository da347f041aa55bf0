// Curlew — loopback ports with nothing on them, listeners that never accept, and connect probes.

import Foundation

/// A loopback port with nothing listening on it. Another test's server may take it once this returns:
/// where that matters, use ``withRefusingPort(_:)``.
package func closedPort() -> Int {
    let (fd, port) = boundLoopbackSocket()
    close(fd)
    return port
}

/// A TCP socket bound to a free loopback port, not listening, and that port.
private func boundLoopbackSocket() -> (fd: Int32, port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = loopback(port: 0)
    _ = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
}

/// Runs `body` with a loopback port that refuses connections for as long as `body` runs: the port stays
/// bound (never listening), so a server that another test starts meanwhile cannot take it, as it can
/// take a port from `closedPort()` or from a server that was shut down.
package func withRefusingPort<T>(_ body: (Int) async throws -> T) async rethrows -> T {
    let (fd, port) = boundLoopbackSocket()
    defer { close(fd) }
    return try await body(port)
}

/// Whether something accepts TCP connections on 127.0.0.1:`port`.
package func canConnect(port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = loopback(port: port)
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    return result == 0
}

/// 127.0.0.1:`port`.
private func loopback(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    return address
}

/// A loopback listener that never accepts and whose backlog is full, so new connects hang.
package struct FullBacklogListener {
    package let port: Int
    private let fds: [Int32]

    package init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = loopback(port: 0)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        listen(listener, 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        var fds = [listener]
        // Fill the accept queue until a further connect stays pending: only then does the kernel drop
        // SYNs, so the engine's connect can only time out.
        for _ in 0..<64 {
            let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            fds.append(client)
            var probe = pollfd(fd: client, events: Int16(POLLOUT), revents: 0)
            if poll(&probe, 1, 200) == 0 { break }  // still connecting after 200 ms: the queue is full
        }
        self.fds = fds
    }

    package func close() { for fd in fds { _ = Glibc.close(fd) } }
}

/// The bytes waiting unread in the receive queue of this process's TCP socket connected from local port
/// `port` to remote port `remotePort` (found through /proc/self/fd), or nil when there is no such socket.
/// Both ports are needed: a test server in this process may listen on, or have accepted on, a port number
/// equal to the client's ephemeral one.
package func receiveQueue(ofLocalPort port: Int, remotePort: Int) -> Int? {
    for fd in socketDescriptors() {
        guard inetPort(of: fd, getsockname) == port, inetPort(of: fd, getpeername) == remotePort else { continue }
        var queued: Int32 = 0
        guard ioctl(fd, UInt(FIONREAD), &queued) == 0 else { return nil }
        return Int(queued)
    }
    return nil
}

/// This process's open socket descriptors (from /proc/self/fd).
private func socketDescriptors() -> [Int32] {
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return [] }
    return entries.compactMap { entry in
        guard let fd = Int32(entry),
            let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)"),
            target.hasPrefix("socket:")
        else { return nil }
        return fd
    }
}

/// The IPv4 port `name` (getsockname or getpeername) reports for `fd`, or nil.
private func inetPort(
    of fd: Int32, _ name: (Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?) -> Int32
) -> Int? {
    var address = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { name(fd, $0, &length) }
    }
    guard named == 0, address.sin_family == sa_family_t(AF_INET) else { return nil }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// How many of this process's TCP sockets are connected to remote port `port`. For a server of the
/// test's own, these are that test's connections only, whatever tests running beside it open.
package func connectionCount(toPort port: Int) -> Int {
    socketDescriptors().count { inetPort(of: $0, getpeername) == port }
}
