// swift-tools-version:6.2
import PackageDescription

// CI (`.ci/run`) sets CURLEW_CI=1: Curlew's own targets then treat warnings as errors and the DocC
// plugin is added to build the documentation. Neither is in the manifest users resolve: warnings as
// errors would break their builds on a newer compiler, and the plugin is a dependency they don't need.
let isCI = Context.environment["CURLEW_CI"] == "1"

let strict: [SwiftSetting] =
    [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
    ] + (isCI ? [.treatAllWarnings(as: .error)] : [])

let package = Package(
    name: "Curlew",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Curlew", targets: ["Curlew"]),
        .library(name: "CurlewEngine", targets: ["CurlewEngine"]),
        .library(name: "CurlewTesting", targets: ["CurlewTesting"]),
        // A session as a swift-service-lifecycle `Service`: its own product, so that services that do not
        // run a ServiceGroup do not build swift-async-algorithms and swift-collections.
        .library(name: "CurlewServiceLifecycle", targets: ["CurlewServiceLifecycle"]),
        // A swift-openapi-runtime ClientTransport: generated clients on Curlew.
        .library(name: "CurlewOpenAPI", targets: ["CurlewOpenAPI"]),
        // The client generated from Tests/OpenAPIFixture/openapi.yaml, which the OpenAPI snippet and the
        // benchmarks link: an example, not for apps.
        .library(name: "OpenAPIFixture", targets: ["OpenAPIFixture"]),
        .executable(name: "curlew-demo", targets: ["CurlewDemo"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.1.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.0"),
        // Tests only: a W3C trace-context instrument that puts `traceparent` on the wire.
        .package(url: "https://github.com/swift-otel/swift-w3c-trace-context", from: "1.0.0"),
    ],
    targets: [
        // libcurl from the system (headers: libcurl4-openssl-dev).
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // zlib from the system (headers: zlib1g-dev).
        .systemLibrary(
            name: "CZlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // Typed, non-variadic wrappers for curl's variadic setopt/getinfo calls.
        .target(name: "CCurlShims", dependencies: ["CCurl"]),
        // The transport: request/response vocabulary and the libcurl event-loop engine.
        .target(
            name: "CurlewEngine",
            dependencies: [
                "CCurlShims", "CCurl", "CZlib",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strict
        ),
        // A session as a swift-service-lifecycle Service (graceful shutdown on the group's signal).
        .target(
            name: "CurlewServiceLifecycle",
            dependencies: [
                "CurlewEngine",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // Generated OpenAPI clients on Curlew: a ClientTransport through Curlew's chain, and OpenAPI
        // middleware in Curlew's chain.
        .target(
            name: "CurlewOpenAPI",
            dependencies: [
                "Curlew", "CurlewEngine",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The tape JSON decoder, which decodes as a configured JSONDecoder would, faster, and the one
        // place that decides between it and JSONDecoder.
        .target(name: "CurlewJSON", swiftSettings: strict),
        // Targets, endpoints, the provider actor, plugins, responses and ApiResult.
        .target(
            name: "Curlew",
            dependencies: [
                "CurlewEngine", "CurlewJSON",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strict
        ),
        // For users' own tests: a real HTTP/1.1 server on loopback (with fault injection), a mock
        // transport that records requests and answers from a script, and endpoint mappings to the server.
        .target(
            name: "CurlewTesting",
            dependencies: [
                "Curlew", "CurlewEngine", "CZlib",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "CurlewDemo",
            dependencies: ["Curlew", "CurlewTesting"],
            swiftSettings: strict
        ),
        // What every test target shares: the real servers on loopback (TLS, HTTP/2, nghttpd and the
        // Python scripts in Tests/Servers), the one process launcher they run on, and small helpers.
        // Not a product: users never see it.
        // GNU extensions the tests' process launcher needs (pipe2, closefrom in posix_spawn).
        .target(name: "CTestSupportShims", path: "Tests/CTestSupportShims"),
        .target(
            name: "CurlewTestSupport",
            dependencies: [
                "CurlewEngine", "CurlewTesting", "CTestSupportShims",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/CurlewTestSupport",
            swiftSettings: strict
        ),
        // DownloadTests' real disk-full test runs it in a tmpfs of its own: downloads one URL, prints how it ended.
        .executableTarget(
            name: "DownloadProbe", dependencies: ["CurlewEngine"], path: "Tests/DownloadProbe", swiftSettings: strict),
        // Run against a libcurl below the floor by `make test-libcurl` and CI: both ways in must refuse it.
        .executableTarget(
            name: "LibcurlFloorProbe", dependencies: ["Curlew", "CurlewEngine"], path: "Tests/LibcurlFloorProbe",
            swiftSettings: strict),
        // Run by SharedSessionTests in a process of its own: a provider without a session starts nothing until
        // its first request.
        .executableTarget(
            name: "SharedSessionProbe", dependencies: ["Curlew", "CurlewEngine"], path: "Tests/SharedSessionProbe",
            swiftSettings: strict),
        .testTarget(
            name: "CurlewEngineTests",
            dependencies: [
                "CurlewEngine", "CurlewTestSupport", "CurlewTesting",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CurlewJSONTests",
            dependencies: ["CurlewJSON"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CurlewTests",
            dependencies: [
                "Curlew", "CurlewJSON", "CurlewTestSupport", "CurlewTesting",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "W3CTraceContext", package: "swift-w3c-trace-context"),
            ],
            swiftSettings: strict
        ),
        // The client swift-openapi-generator made from Tests/OpenAPIFixture/openapi.yaml (`make openapi-generate`),
        // which CurlewOpenAPI's tests call through the transport. Not a product.
        .target(
            name: "OpenAPIFixture",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Tests/OpenAPIFixture",
            exclude: ["openapi.yaml", "openapi-generator-config.yaml"],
            // Generated code: on Swift 6.3 its `public import`s warn (the generator silences them from 6.4 on),
            // and it is not ours to edit. In no product, so users never build it.
            swiftSettings: [.unsafeFlags(["-suppress-warnings"])]
        ),
        .testTarget(
            name: "CurlewOpenAPITests",
            dependencies: [
                "CurlewOpenAPI", "Curlew", "CurlewEngine", "OpenAPIFixture", "CurlewTestSupport", "CurlewTesting",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CurlewServiceLifecycleTests",
            dependencies: [
                "CurlewServiceLifecycle", "CurlewEngine", "CurlewTestSupport", "CurlewTesting", "CCurlShims",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)

if isCI {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"))
}
