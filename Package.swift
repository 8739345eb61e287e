// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "Ubiquity",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "ubiq", targets: ["ubiq"]),
        .executable(name: "ubiq-bench", targets: ["ubiq-bench"]),
        // For apps: containers, metadata queries, settings and versions through the device's daemon.
        .library(name: "Ubiquity", targets: ["Ubiquity"]),
        .executable(name: "ubiq-notes", targets: ["ubiq-notes"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/LebJe/TOMLKit.git", from: "0.6.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/CoreOffice/XMLCoder.git", from: "0.18.2"),
    ],
    targets: [
        // Pure: IDs, paths, versions, conflict rule, chunker, hashes, HLC, key-value values and limits.
        .target(
            name: "UbiqCore",
            dependencies: [.product(name: "Crypto", package: "swift-crypto"), .product(name: "CryptoExtras", package: "swift-crypto")]
        ),
        // Wire types and stable error codes shared by server and clients.
        .target(name: "UbiqProtocol", dependencies: ["UbiqCore"]),
        // Memory for chunk batches on the wire, shared by the server and the client.
        .target(name: "UbiqTransport", dependencies: ["UbiqCore", "CFileSupport", .product(name: "NIOCore", package: "swift-nio")]),
        // Metadata on SQLite (GRDB) or PostgreSQL (postgres-nio), chunks in a folder or an S3 bucket, behind protocols.
        .target(
            name: "UbiqStorage",
            dependencies: [
                "UbiqCore", "CFileSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "XMLCoder", package: "XMLCoder"),  // the object store's listings and error answers
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // Hummingbird routes, authentication, push channel, quota.
        .target(
            name: "UbiqServer",
            dependencies: [
                "UbiqCore", "UbiqProtocol", "UbiqStorage", "UbiqTransport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),  // the request parts a slow body is timed by
                .product(name: "NIOWebSocket", package: "swift-nio"),  // a push message's frame, built once for every channel
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The HTTP + WebSocket client of the server API (used by the engine, the tests and the benchmarks).
        .target(
            name: "UbiqClient",
            dependencies: [
                "UbiqCore", "UbiqProtocol", "UbiqTransport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The daemon protocol: requests, answers, the line framing, where a device keeps its home
        // (shared by the daemon, the front end and the library, which need nothing else of the engine).
        .target(
            name: "UbiqDaemonProtocol",
            dependencies: ["UbiqCore", "UbiqProtocol", "UbiqTransport", .product(name: "NIOCore", package: "swift-nio")]
        ),
        // The sync engine: three trees, inotify, transfers, the daemon.
        .target(
            name: "UbiqEngine",
            dependencies: [
                "UbiqCore", "UbiqProtocol", "UbiqDaemonProtocol", "UbiqClient", "UbiqTransport", "CFileSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // Linux file calls Glibc's Swift module does not expose (renameat2) and the direct-I/O writer and reader.
        .target(name: "CFileSupport"),
        // ncursesw through a system-library target (stateless shims only).
        .systemLibrary(name: "CNCursesW", path: "Sources/CNCursesW", providers: [.apt(["libncurses-dev"])]),
        // C with state: the SIGWINCH wake pipe, character widths, the UTF-8 locale.
        .target(name: "CTuiSupport"),
        // The terminal front end: screen buffer, themes, views, controllers, the ncurses driver.
        .target(
            name: "UbiqTUI",
            dependencies: [
                "UbiqCore", "UbiqEngine", "UbiqDaemonProtocol", "UbiqProtocol", "Ubiquity", "CNCursesW", "CTuiSupport", "CFileSupport",
                .product(name: "TOMLKit", package: "TOMLKit"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Argument parsing, exit codes, --json.
        .target(
            name: "UbiqCLI",
            dependencies: [
                "UbiqCore", "UbiqServer", "UbiqStorage", "UbiqEngine", "UbiqDaemonProtocol", "UbiqClient", "UbiqTUI", "UbiqProtocol", "Ubiquity",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The library apps import: the seeds' APIs (containers, MetadataQuery, KeyValueStore,
        // FileVersion) on Swift concurrency, answered by the daemon over its socket.
        .target(
            name: "Ubiquity",
            dependencies: [
                "UbiqCore", "UbiqDaemonProtocol", "UbiqProtocol", "CFileSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .executableTarget(name: "ubiq", dependencies: ["UbiqCLI"]),
        // The example app of the library's guide: a terminal notes app using only `import Ubiquity`.
        .executableTarget(name: "ubiq-notes", dependencies: ["Ubiquity", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        .executableTarget(
            name: "ubiq-bench",
            dependencies: [
                "UbiqCore", "UbiqServer", "UbiqStorage", "UbiqClient", "UbiqProtocol", "UbiqEngine", "UbiqDaemonProtocol", "UbiqTUI", "Ubiquity",
                "UbiqHarness",  // real servers and devices on loopback: the soak's fleet, the proxy that counts wire bytes
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        // Real servers on loopback ports and devices (engines) in temp folders, the randomized fleet
        // with its faults (a lossy network, a failing disk), seeded randomness: what the tests and
        // `ubiq-bench soak` drive. No test framework.
        .target(
            name: "UbiqHarness",
            dependencies: [
                "UbiqCore", "UbiqServer", "UbiqStorage", "UbiqClient", "UbiqProtocol", "UbiqEngine", "UbiqDaemonProtocol", "CFileSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Runs the test helpers' set-up when a test binary starts.
        .target(name: "CTestHook", path: "Tests/CTestHook"),
        // Test-only helpers: the harness plus child processes, tmux, certificates, PostgreSQL.
        .target(
            name: "UbiqTesting",
            dependencies: [
                "UbiqHarness", "CTestHook",
                "UbiqCore", "UbiqServer", "UbiqStorage", "UbiqClient", "UbiqProtocol", "UbiqEngine", "UbiqDaemonProtocol", "CFileSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "X509", package: "swift-certificates"),  // certificates for the TLS tests
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/UbiqTesting"
        ),
        .testTarget(name: "UbiqCoreTests", dependencies: ["UbiqCore", "UbiqTesting", .product(name: "Crypto", package: "swift-crypto")]),
        .testTarget(name: "UbiqTUITests", dependencies: ["UbiqTUI", "UbiqCore", "UbiqEngine", "UbiqDaemonProtocol", "UbiqProtocol", "UbiqTesting"],
                    exclude: ["Golden"]),  // read from the source tree (#filePath), so a changed golden needs no rebuild
        .testTarget(
            name: "UbiqEngineTests",
            dependencies: ["UbiqEngine", "UbiqDaemonProtocol", "UbiqClient", "UbiqCore", "UbiqTesting", "CFileSupport", "UbiqTransport", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "NIOCore", package: "swift-nio")]
        ),
        .testTarget(name: "UbiquityTests", dependencies: ["Ubiquity", "UbiqCore", "UbiqEngine", "UbiqDaemonProtocol", "UbiqTesting", .product(name: "NIOCore", package: "swift-nio"),
                                                          .product(name: "Logging", package: "swift-log")]),
        .testTarget(
            name: "UbiqServerTests",
            dependencies: ["UbiqServer", "UbiqStorage", "UbiqClient", "UbiqProtocol", "UbiqTesting", .product(name: "GRDB", package: "GRDB.swift"),
                           .product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "NIOSSL", package: "swift-nio-ssl"),
                           .product(name: "Crypto", package: "swift-crypto"), .product(name: "PostgresNIO", package: "postgres-nio")]
        ),
    ]
)
