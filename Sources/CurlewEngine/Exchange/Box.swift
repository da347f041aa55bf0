// Curlew — a value kept out of line, so that the struct holding it stays small.

/// An immutable value on the heap: a large value a state machine holds only now and then (a response
/// head, a failure) costs its holder one pointer instead of its size on every copy.
final class Box<Value: Sendable>: Sendable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}
