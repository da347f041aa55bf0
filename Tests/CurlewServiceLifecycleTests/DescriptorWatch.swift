// Curlew — whether particular descriptors' files are still open, told apart from later files that reuse
// their numbers: each is registered in an epoll set of the test's own, which drops a registration when
// the file it names is closed.

// Not a dependency of its own: the engine's C shim is where this package's Swift code finds <sys/epoll.h>.
import CCurlShims
import CurlewEngine
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Watches descriptors by their open files, not their numbers: another test opening a file that takes a
/// closed descriptor's number is not mistaken for a leak. Registrations carry no events, so nothing wakes.
final class DescriptorWatch: Sendable {
    private let epoll: Int32
    private let watched = Locked<[Int32]>([])

    init() {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
    }

    deinit {
        close(epoll)
    }

    /// Starts watching `fd` (open now); false when it could not be registered.
    @discardableResult
    func watch(_ fd: Int32) -> Bool {
        var event = epoll_event()
        event.events = 0
        event.data.fd = fd
        guard epoll >= 0, epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) == 0 else { return false }
        watched.withLock { $0.append(fd) }
        return true
    }

    /// The descriptors watched so far.
    var all: [Int32] { watched.withLock { $0 } }

    /// The watched descriptors whose files are still open: the epoll set's registrations, from
    /// `/proc/self/fdinfo` (`tfd:` lines), in ascending order.
    func stillOpen() -> [Int32] {
        guard let info = try? String(contentsOfFile: "/proc/self/fdinfo/\(epoll)", encoding: .utf8) else { return [-1] }
        return info.split(separator: "\n").compactMap { line -> Int32? in
            guard line.hasPrefix("tfd:") else { return nil }
            return line.dropFirst(4).split(separator: " ").first.flatMap { Int32($0) }
        }.sorted()
    }
}
