import Foundation
import UbiqCore

/// Item and version IDs numbered for pure tests (`NumberedIDs.item(3)`): readable in failures,
/// the same in every run.
public enum NumberedIDs {
    public static func item(_ n: Int) -> ItemID { ItemID(uuid: UUID(uuidString: String(format: "00000000-0000-7000-8000-%012X", n))!) }
    public static func version(_ n: Int) -> VersionID { VersionID(uuid: UUID(uuidString: String(format: "00000000-0000-7000-9000-%012X", n))!) }
}
