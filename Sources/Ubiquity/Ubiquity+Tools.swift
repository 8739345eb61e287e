import Foundation
import UbiqDaemonProtocol

// The way `ubiq`'s own front ends (the command line and the terminal front end) ask the daemon:
// through this library, like any program — one client, one protocol, one set of errors. Not
// for apps (`@_spi(UbiqTools)`): they use the seed-shaped types.
extension Ubiquity {
    /// The library for a resolved device home. `explicitHome`: the `--home` the user gave (an
    /// autostarted daemon gets the same one); `autostart`: start a daemon when none runs
    /// (nil: as the config file says).
    @_spi(UbiqTools)
    public init(device home: DeviceHome, explicitHome: String?, autostart: Bool? = false) {
        self.init(resolved: home, homeArgument: explicitHome, autostart: autostart, executable: nil)
    }

    /// The daemon's answer to `request` as it is (a refusal is an answer with `ok == false`, not
    /// an error). `patience`: how long a daemon that holds the home but does not answer yet (it
    /// opens its state and scans before its socket listens) is waited for; `waiting` is called
    /// once when the wait begins. Throws ``UbiquityError`` (`no_daemon`, `broken_answer`).
    @_spi(UbiqTools)
    public func send(_ request: DeviceRequest, container: ContainerID? = nil, patience: Duration = .zero,
                     waiting: (@Sendable () -> Void)? = nil,
                     onEvent: @escaping @Sendable (DeviceResponse) async -> Bool = { _ in true }) async throws -> DeviceResponse {
        let end = ContinuousClock.now + patience
        var told = false
        while true {
            do {
                return try await answer(request, container: container, onEvent: onEvent)
            } catch let e as UbiquityError where e.code == .noDaemon && ContinuousClock.now < end {
                if !told { waiting?(); told = true }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// One try: with autostart on, a daemon that does not run is started first (once; its
    /// answer waited for up to 15 s).
    func answer(_ request: DeviceRequest, container: ContainerID?,
                onEvent: @escaping @Sendable (DeviceResponse) async -> Bool) async throws -> DeviceResponse {
        do {
            do { return try await client.send(request, container: container, onEvent: onEvent) } catch DaemonClient.Failure.noDaemon(let why) where starter.enabled {
                try await starter.start(waitingFor: client, because: why)
                return try await client.send(request, container: container, onEvent: onEvent)
            }
        } catch let f as DaemonClient.Failure {
            throw UbiquityError.from(f, home: home.stateDirectory.path)
        }
    }

    /// Whether a daemon answers for this home now (never starts one).
    @_spi(UbiqTools)
    public var daemonAnswers: Bool {
        get async { (try? await client.send(.hello(version: DaemonWire.protocolVersion, client: "ubiq")))?.hello != nil }
    }
}

extension Ubiquity {
    /// Runs a streaming request for as long as its program follows it: when the daemon goes
    /// away after the stream `began` (a restart, an upgrade, a sign-out), the request is made
    /// again every `retry` until a daemon answers — never starting one then (a daemon stopped
    /// on purpose stays stopped). Before it began, a missing daemon is thrown; a refusal is
    /// always thrown. Returns when the task is cancelled, or when `ended` says so after a
    /// stream stopped (`onEvent` returned false).
    func follow(_ request: DeviceRequest, container: ContainerID?, retry: Duration, began: @escaping @Sendable () -> Bool,
                ended: @escaping @Sendable () -> Bool = { false },
                onEvent: @escaping @Sendable (DeviceResponse) async -> Bool) async throws {
        while !Task.isCancelled {
            let ubiquity = began() ? waitingOnly : self
            do {
                _ = try await ubiquity.ask(request, container: container, onEvent: onEvent)
            } catch let e as UbiquityError where began() && [.noDaemon, .brokenAnswer].contains(e.code) {
                // The daemon went away: asked again below.
            }
            if Task.isCancelled || ended() { return }
            try? await Task.sleep(for: retry)
        }
    }
}
