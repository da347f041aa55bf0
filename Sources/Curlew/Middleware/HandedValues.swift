// Curlew — where a middleware keeps what the caller's handler returned, so that its own handler's step
// need not be generic.

/// The values the caller's handler returned to a middleware's own handler, kept until the middleware
/// returns one of them.
///
/// A middleware that decides from the head hands `next` a handler of its own whose step says what it
/// decided. A step generic over the caller's result (`Step<Return>`) costs a generic-metadata lookup on
/// every call, as the chain is called unspecialised; a step that names its value by the address kept
/// here is of one plain type. A chain below that called the handler more than once hands back exactly
/// the value its step names; ``release()`` destroys the others.
struct HandedValues<Value> {
    /// The last value kept; each node starts with the address of the one kept before it.
    private var last: UnsafeMutableRawPointer?

    @inline(__always)
    init() {}

    /// Where a node's value starts: after the link, at the value's alignment.
    @inline(__always)
    private static var offset: Int {
        let alignment = MemoryLayout<Value>.alignment
        return (MemoryLayout<UnsafeMutableRawPointer?>.size + alignment - 1) / alignment * alignment
    }

    /// Keeps `value`; returns the address a step names it by.
    @inline(__always)
    mutating func keep(_ value: consuming Value) -> UnsafeMutableRawPointer {
        let node = UnsafeMutableRawPointer.allocate(
            byteCount: Self.offset + MemoryLayout<Value>.stride,
            alignment: max(MemoryLayout<Value>.alignment, MemoryLayout<UnsafeMutableRawPointer?>.alignment))
        node.storeBytes(of: last, as: UnsafeMutableRawPointer?.self)
        (node + Self.offset).initializeMemory(as: Value.self, to: value)
        last = node
        return node
    }

    /// Takes the value kept at `node` (an address ``keep(_:)`` returned, not taken yet).
    @inline(__always)
    mutating func take(_ node: UnsafeMutableRawPointer) -> Value {
        unlink(node)
        let value = (node + Self.offset).assumingMemoryBound(to: Value.self).move()
        node.deallocate()
        return value
    }

    /// Destroys every value not taken.
    @inline(__always)
    mutating func release() {
        while let node = last {
            last = node.load(as: UnsafeMutableRawPointer?.self)
            (node + Self.offset).assumingMemoryBound(to: Value.self).deinitialize(count: 1)
            node.deallocate()
        }
    }

    /// Removes `node` from the list; usually the last, so no walk.
    @inline(__always)
    private mutating func unlink(_ node: UnsafeMutableRawPointer) {
        let before = node.load(as: UnsafeMutableRawPointer?.self)
        if last == node {
            last = before
            return
        }
        var later = last
        while let current = later {
            let previous = current.load(as: UnsafeMutableRawPointer?.self)
            if previous == node {
                current.storeBytes(of: before, as: UnsafeMutableRawPointer?.self)
                return
            }
            later = previous
        }
    }
}
