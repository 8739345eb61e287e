import CryptoExtras
import Foundation

/// Slow salted password hashing: PBKDF2-HMAC-SHA256, 210,000 rounds (OWASP's figure), 16-byte salt.
public enum PasswordHasher {
    public static let rounds = 210_000

    /// A new verifier for `password` with a fresh random salt, hashed `rounds` times.
    public static func make(_ password: String, rounds: Int = rounds) throws -> PasswordRecord {
        var rng = SystemRandomNumberGenerator()
        let salt = (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) }
        return PasswordRecord(salt: salt, iterations: rounds, derived: try derive(password, salt: salt, rounds: rounds))
    }

    /// True if `password` matches the stored verifier (constant-time comparison).
    public static func verify(_ password: String, against record: PasswordRecord) -> Bool {
        guard let d = try? derive(password, salt: record.salt, rounds: record.iterations), d.count == record.derived.count else { return false }
        var diff: UInt8 = 0
        for (a, b) in zip(d, record.derived) { diff |= a ^ b }
        return diff == 0
    }

    static func derive(_ password: String, salt: [UInt8], rounds: Int) throws -> [UInt8] {
        let key = try KDF.Insecure.PBKDF2.deriveKey(from: Array(password.utf8), salt: salt, using: .sha256, outputByteCount: 32, unsafeUncheckedRounds: rounds)
        return key.withUnsafeBytes { Array($0) }
    }
}
