// swift-tools-version:6.2
import Foundation
import PackageDescription

// Curlew itself, from this repository (the examples build against the code beside them).
let curlewPath = ".."
// SwiftPM names a local package after its folder, so products are looked up under that name.
let curlew = URL(fileURLWithPath: curlewPath, relativeTo: URL(fileURLWithPath: Context.packageDirectory + "/"))
    .standardizedFileURL.lastPathComponent

let package = Package(
    name: "CurlewExamples",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: curlewPath),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        // For the name check only: what a service that also uses async-http-client imports.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.27.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.24.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.8.0"),
    ],
    targets: [
        // A Hummingbird 2 service that answers its routes by calling an upstream JSON API through Curlew.
        .executableTarget(
            name: "HummingbirdGateway",
            dependencies: [
                .product(name: "Curlew", package: curlew),
                .product(name: "CurlewServiceLifecycle", package: curlew),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("MemberImportVisibility"),
            ]
        ),
        // A compile check: Curlew's public types named unqualified beside Hummingbird's, NIO's and
        // async-http-client's (see NameCheck.swift). Built, never run.
        .target(
            name: "NameCheck",
            dependencies: [
                .product(name: "Curlew", package: curlew),
                .product(name: "CurlewOpenAPI", package: curlew),
                .product(name: "CurlewServiceLifecycle", package: curlew),
                .product(name: "CurlewTesting", package: curlew),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            ],
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("MemberImportVisibility"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
