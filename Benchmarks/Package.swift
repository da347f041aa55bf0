// swift-tools-version:6.2
// Curlew benchmarks: a separate package so the library's own dependency graph stays small.
import PackageDescription

let package = Package(
    name: "CurlewBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Curlew", path: ".."),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.1.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.20.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.27.0"),
        // The metrics API, for the provider with a trivial recording backend (`curlew-metrics`).
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        // sse-conformance (the parsing table run against the OpenAPI runtime's SSE decoder), and bench-openapi.
        .package(url: "https://github.com/apple/swift-openapi-runtime", exact: "1.13.4"),
        // bench-openapi (issue 31): the generated client on async-http-client's OpenAPI transport.
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client", exact: "1.5.0"),
    ],
    targets: [
        // Workloads, the concurrent runner and the figures every client reports.
        .target(name: "BenchCore", dependencies: [.product(name: "Histogram", package: "hdrhistogram-swift")]),
        // Curlew's clients (provider and bare engine); `make bench-smoke` builds only this one.
        .executableTarget(
            name: "bench-curlew",
            dependencies: [
                "BenchCore", .product(name: "Curlew", package: "Curlew"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        // Server-sent events (issue 17): Curlew's client on `CurlSession.events(for:)`, or through a provider
        // (`BENCH_SSE_CLIENT=provider`) (10,000 streams, parse rate).
        // glibc's heap figures for bench-sse (live heap, malloc_trim).
        .target(name: "BenchShims"),
        // The soak (issue 33, `make soak`): one session, a million mixed requests, its resources sampled.
        .executableTarget(name: "soak", dependencies: ["BenchShims", .product(name: "Curlew", package: "Curlew")]),
        .executableTarget(
            name: "bench-sse",
            dependencies: ["BenchCore", "BenchShims", .product(name: "Curlew", package: "Curlew")],
            path: "Sources/bench-sse"
        ),
        // The Swift peers: async-http-client and URLSession (FoundationNetworking).
        .executableTarget(
            name: "bench-peers",
            dependencies: [
                "BenchCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // Probes used while building the engine (loop CPU, cancellation latency, provider overhead).
        .executableTarget(
            name: "engine-load",
            dependencies: [.product(name: "CurlewEngine", package: "Curlew")],
            path: "Sources/engine-load"
        ),
        .executableTarget(
            name: "engine-cancel",
            dependencies: [.product(name: "CurlewEngine", package: "Curlew")],
            path: "Sources/engine-cancel"
        ),
        // The server-sent-events parsing table against the OpenAPI runtime's decoder and Curlew's parser.
        .executableTarget(
            name: "sse-conformance",
            dependencies: [
                .product(name: "CurlewEngine", package: "Curlew"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            ],
            path: "Sources/sse-conformance"
        ),
        // The generated client (issue 31: Curlew's OpenAPIFixture product, from Tests/OpenAPIFixture/openapi.yaml)
        // on Curlew's `CurlewTransport` and on swift-openapi-async-http-client's `AsyncHTTPClientTransport`: a
        // small GET and a 256 MiB streamed download. Not in `make bench-smoke`.
        .executableTarget(
            name: "bench-openapi",
            dependencies: [
                "BenchCore",
                .product(name: "OpenAPIFixture", package: "Curlew"),
                .product(name: "CurlewOpenAPI", package: "Curlew"),
                .product(name: "CurlewEngine", package: "Curlew"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "Sources/bench-openapi"
        ),
        .executableTarget(
            name: "provider-load",
            dependencies: [.product(name: "Curlew", package: "Curlew")],
            path: "Sources/provider-load"
        ),
    ],
    swiftLanguageModes: [.v6]
)
