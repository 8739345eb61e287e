import Foundation
import UbiqCore
import UbiqProtocol

/// Where each account's devices serve chunks on their LANs (#40): a device is listed from its
/// last peer-ticket request until that ticket expires, or until it is revoked or signs out
/// (then at once). Kept in this server's memory: a device asks again well before its ticket
/// expires, so a restarted server knows every active device within the hour. Bounded: at most
/// `perAccount` devices an account (the longest unseen one goes first).
actor PeerRegistry {
    struct Entry {
        var endpoint: PeerEndpoint
        var containers: Set<ContainerID>
        var expires: Int64
        var seen: Int64
    }
    static let perAccount = 64
    private var accounts: [Int64: [DeviceID: Entry]] = [:]

    /// Lists `endpoint` for `account` until `expires`; returns the account's other devices
    /// listed at `now` that share a container with it, those seen from the same address first.
    func register(account: Int64, _ endpoint: PeerEndpoint, containers: [ContainerID], expires: Int64, now: Int64) -> [PeerEndpoint] {
        var devices = (accounts[account] ?? [:]).filter { $0.value.expires > now }
        devices[endpoint.device] = Entry(endpoint: endpoint, containers: Set(containers), expires: expires, seen: now)
        while devices.count > Self.perAccount, let oldest = devices.min(by: { $0.value.seen < $1.value.seen })?.key {
            devices[oldest] = nil
        }
        accounts[account] = devices
        let mine = Set(containers)
        return devices.values.filter { $0.endpoint.device != endpoint.device && !$0.containers.isDisjoint(with: mine) }
            .sorted { a, b in
                let (na, nb) = (a.endpoint.seenFrom == endpoint.seenFrom, b.endpoint.seenFrom == endpoint.seenFrom)
                return na != nb ? na : a.endpoint.device < b.endpoint.device
            }
            .map(\.endpoint)
    }

    /// Forgets `device` of `account` (revoked or signed out).
    func remove(account: Int64, device: DeviceID) {
        accounts[account]?[device] = nil
    }

    /// The devices of `account` listed at `now`.
    func listed(account: Int64, now: Int64) -> [DeviceID] {
        (accounts[account] ?? [:]).filter { $0.value.expires > now }.keys.sorted()
    }
}
