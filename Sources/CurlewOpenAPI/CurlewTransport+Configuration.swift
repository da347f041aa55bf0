// Curlew — what a CurlewTransport is configured with: timeouts and options per operation, the logger,
// and which request bodies are read before sending.

public import CurlewEngine
public import Logging

extension CurlewTransport {
    /// Timeouts and transfer options, for every operation and per operation id.
    ///
    /// ```swift
    /// var configuration = CurlewTransport.Configuration(timeout: .seconds(10))
    /// configuration.operations["download"] = .init(timeout: .seconds(300))
    /// ```
    public struct Configuration: Sendable {
        /// The options of every operation that has none of its own in ``operations``.
        public var defaults: OperationOptions
        /// Options per operation id (the `operationId` of the OpenAPI document).
        public var operations: [String: OperationOptions]
        /// The logger Curlew's lines about each call go to, with its request id and operation as metadata.
        public var logger: Logger
        /// Request bodies that can be iterated more than once (`.multiple`) and whose known length is at
        /// most this many bytes are read before sending and sent from memory: cheapest, and a redirect or a
        /// retry sends them again without iterating the body. Larger bodies, and bodies of unknown length
        /// or iterated once, are streamed. Default 64 KiB.
        public var inMemoryRequestBodyLimit: Int

        /// A configuration.
        ///
        /// - Parameters:
        ///   - timeout: The total timeout of every operation without its own (nil: the session's); see
        ///     ``OperationOptions/timeout``.
        ///   - operations: Options per operation id.
        ///   - logger: Where Curlew's lines about each call go (label `curlew.openapi`).
        ///   - inMemoryRequestBodyLimit: The largest replayable body read before sending.
        public init(
            timeout: Duration? = nil, operations: [String: OperationOptions] = [:],
            logger: Logger = Logger(label: "curlew.openapi"),
            inMemoryRequestBodyLimit: Int = Configuration.defaultInMemoryRequestBodyLimit
        ) {
            defaults = OperationOptions(timeout: timeout)
            self.operations = operations
            self.logger = logger
            self.inMemoryRequestBodyLimit = inMemoryRequestBodyLimit
        }

        /// The default ``inMemoryRequestBodyLimit``: 64 KiB.
        public static let defaultInMemoryRequestBodyLimit = 64 * 1024

        /// The options of the operation `operationID`.
        func options(for operationID: String) -> OperationOptions {
            operations.isEmpty ? defaults : operations[operationID] ?? defaults
        }
    }

    /// How the calls of one operation are sent.
    public struct OperationOptions: Sendable {
        /// The total timeout (nil: the session's), counted from the call, its redirects and retries
        /// included, until the response head has arrived: a body read afterwards (an event stream, a
        /// download) is watched by the idle timeout, unless ``/CurlewEngine/TransferOptions/timeoutCoversBody``
        /// is set in ``transferOptions``.
        public var timeout: Duration?
        /// Settings that override the session's (idle and connect timeouts, a body limit, TLS identity);
        /// none by default.
        public var transferOptions: TransferOptions

        /// Options for an operation.
        public init(timeout: Duration? = nil, transferOptions: TransferOptions = TransferOptions()) {
            self.timeout = timeout
            self.transferOptions = transferOptions
        }
    }
}
