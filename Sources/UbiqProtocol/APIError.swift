import UbiqCore

/// The error body every failed request carries: `{"error": {"code": "...", "message": "..."}}`.
public struct APIErrorBody: Codable, Sendable, Equatable {
    public struct Detail: Codable, Sendable, Equatable {
        public let code: ErrorCode
        public let message: String
        /// For `path_exists` on a new file of an end-to-end encrypted account: the item the
        /// server has at the path. The server files a plain account's new file there itself (two
        /// devices creating one path make one item); an encrypted account's device seals its
        /// version's record for the item it is filed under, so it commits there again.
        public let item: ItemID?
        public init(code: ErrorCode, message: String, item: ItemID? = nil) { self.code = code; self.message = message; self.item = item }
    }
    public let error: Detail
    /// For `incomplete_content`: the chunks still missing.
    public let missing: [ContentHash]?
    public init(code: ErrorCode, message: String, missing: [ContentHash]? = nil, item: ItemID? = nil) {
        error = Detail(code: code, message: message, item: item)
        self.missing = missing
    }
}

extension ErrorCode {
    /// The HTTP status that carries this code.
    public var httpStatus: Int {
        switch self {
        case .invalidPath, .invalidContainer, .invalidHash, .invalidRequest, .invalidValue,
             .kvTooManyKeys, .kvKeyInvalid, .kvValueTooLarge, .kvStoreTooLarge, .kvClockAhead:
            400
        case .unauthorized, .badCredentials: 401
        case .forbidden: 403
        case .tooManyAttempts: 429
        case .notFound: 404
        case .pathExists, .userExists, .itemChanged: 409
        case .payloadTooLarge: 413
        case .hashMismatch, .missingChunks, .incompleteContent: 422
        case .kvCursorExpired, .cursorExpired: 410
        case .storageFull: 507
        case .storageFailure, .internalError, .chunkDamaged: 500
        case .badResponse, .tampered: 502
        case .keyMissing: 403
        case .serverUnreachable: 503
        }
    }
}
