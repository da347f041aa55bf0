// Curlew — state guarded by a pthread mutex.

#if canImport(Glibc)
import Glibc
#endif

/// A value that is only read or written while holding a `pthread_mutex_t`.
///
/// Used instead of `Synchronization.Mutex` because the thread sanitizer cannot see the futex slow path
/// of `Mutex` (it lives in the uninstrumented standard library), so a contended `Mutex` shows up as a
/// false data race; `pthread_mutex_lock` is intercepted and understood. The state and the mutex share
/// one allocation.
package struct Locked<State: Sendable>: @unchecked Sendable {
    // @unchecked: `State` is Sendable and every access to it goes through `withLock`, which holds the
    // mutex stored beside it.
    private let storage: LockedStorage<State>

    /// Wraps `state`.
    package init(_ state: State) {
        storage = LockedStorage.make(state)
    }

    /// Wraps the state `make` returns, built in place: a large state is not copied in (and its references
    /// retained and released) on the way.
    package init(making make: () -> State) {
        storage = LockedStorage.make(making: make)
    }

    /// Runs `body` with exclusive access to the state. `body` must not block or call back into the lock.
    @inline(__always)
    package func withLock<Result, Failure: Error>(
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try storage.withLock(body)
    }
}

/// Adaptive: a contended lock spins briefly before sleeping in the kernel. The sections are a few hundred
/// nanoseconds, so a waiter usually gets the lock while spinning; a task-pool worker that sleeps instead is
/// one that libdispatch's monitor may see blocked while work waits, and answer with another worker that it
/// keeps (RELIABILITY.md, "Threads"). Made once: a `Locked` is made per exchange.
private let adaptiveMutexAttributes: pthread_mutexattr_t = {
    var attributes = pthread_mutexattr_t()
    pthread_mutexattr_init(&attributes)
    pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
    return attributes
}()

/// The heap object behind ``Locked``: the state as the header, the mutex as the single tail element,
/// so the mutex never moves while it is in use.
final class LockedStorage<State>: ManagedBuffer<State, pthread_mutex_t> {
    static func make(_ state: State) -> LockedStorage<State> {
        make { state }
    }

    static func make(making: () -> State) -> LockedStorage<State> {
        let buffer = create(minimumCapacity: 1) { _ in making() }
        // `create` on this subclass returns an instance of it; the downcast only restores the type.
        let storage = unsafeDowncast(buffer, to: LockedStorage<State>.self)
        storage.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            withUnsafePointer(to: adaptiveMutexAttributes) { _ = pthread_mutex_init(mutex, $0) }
        }
        return storage
    }

    @inline(__always)
    func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        try withUnsafeMutablePointers { (state, mutex) throws(Failure) -> Result in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&state.pointee)
        }
    }

    deinit {
        // The header (the state) is destroyed by ManagedBuffer itself; the tail element is ours.
        withUnsafeMutablePointerToElements { mutex in
            pthread_mutex_destroy(mutex)
            _ = mutex.deinitialize(count: 1)
        }
    }
}
