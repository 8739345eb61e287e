/// Stable error codes shared by every layer: the core, the server's wire errors,
/// the client and the command line. A code never changes meaning once shipped.
public enum ErrorCode: String, Codable, Sendable, CaseIterable {
    // Input validation
    case invalidPath = "invalid_path"
    case invalidContainer = "invalid_container"
    case invalidHash = "invalid_hash"
    case invalidRequest = "invalid_request"
    case invalidValue = "invalid_value"
    case payloadTooLarge = "payload_too_large"
    // Authentication and authorisation
    case unauthorized = "unauthorized"
    case badCredentials = "bad_credentials"
    case forbidden = "forbidden"
    case tooManyAttempts = "too_many_attempts"
    // State
    case notFound = "not_found"
    case pathExists = "path_exists"
    case storageFull = "storage_full"
    case hashMismatch = "hash_mismatch"
    case missingChunks = "missing_chunks"
    case incompleteContent = "incomplete_content"
    case userExists = "user_exists"
    /// A conditional delete found the item changed since the version it named (an edit wins
    /// over a delete), or a folder that still holds items.
    case itemChanged = "item_changed"
    // Key-value limits
    case kvTooManyKeys = "kv_too_many_keys"
    case kvKeyInvalid = "kv_key_invalid"
    case kvValueTooLarge = "kv_value_too_large"
    case kvStoreTooLarge = "kv_store_too_large"
    /// A write stamped further ahead of the server's clock than `KVLimits.maxStampAheadMillis`
    /// (the writing device's clock is wrong): refused, so no stamp can outrank every later write.
    case kvClockAhead = "kv_clock_ahead"
    /// A change feed asked from before deletes the store has since forgotten (see
    /// `KVLimits.maxTombstones`): the device reloads the whole store.
    case kvCursorExpired = "kv_cursor_expired"
    /// A container's change feed asked from before deletes the server has since forgotten
    /// (an account keeps the newest `SQLMetadataStore.deletesKept` of its purged items): the
    /// device reads the whole feed again and takes what is no longer listed as deleted.
    case cursorExpired = "cursor_expired"
    // Client side
    case serverUnreachable = "server_unreachable"
    case badResponse = "bad_response"
    /// A chunk the server keeps does not open with its key or does not hash to its name: it is
    /// never served (a device reports it, and writes nothing).
    case chunkDamaged = "chunk_damaged"
    /// End-to-end encryption: something the server sent does not open with the account's key,
    /// or is not what it claims to be (a swapped or cut chunk, a name that is not a sealed
    /// name). Reported on the device; nothing of it is written into the folder.
    case tampered = "tampered"
    /// End-to-end encryption: the account's content is encrypted and this device has no key
    /// (sign in with `--recovery-key`, or have a trusted device approve this one).
    case keyMissing = "key_missing"
    // Everything else
    case storageFailure = "storage_failure"
    case internalError = "internal_error"
}

/// The core layer's error: a stable code and a sentence a person can read.
public struct CoreError: Error, Equatable, Sendable, CustomStringConvertible {
    public let code: ErrorCode
    public let message: String

    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(message) [\(code.rawValue)]" }
}
