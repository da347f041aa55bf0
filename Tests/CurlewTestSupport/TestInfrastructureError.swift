// Curlew — a failure of the test infrastructure, told apart from a failure of the code under test.

/// A failure of the test infrastructure itself: Python or a server missing, a script failing, a timeout.
package struct TestInfrastructureError: Error, CustomStringConvertible {
    package let description: String

    package init(description: String) {
        self.description = description
    }
}
