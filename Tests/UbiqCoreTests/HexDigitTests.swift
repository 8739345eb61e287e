import Testing
@testable import UbiqCore

/// The branch-free hex digit every hash and ID parser uses, against the plain definition, for
/// every byte.
@Test func hexDigitValueForEveryByte() {
    for c in UInt8.min...UInt8.max {
        let expected: UInt8? = switch c {
        case 0x30...0x39: c - 0x30
        case 0x61...0x66: c - 0x61 + 10
        case 0x41...0x46: c - 0x41 + 10
        default: nil
        }
        let v = HexDigit.value(c)
        if let expected {
            #expect(v == expected, "byte \(c)")
        } else {
            #expect(v & HexDigit.invalid != 0, "byte \(c) taken for a digit")
        }
    }
}
