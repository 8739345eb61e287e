import Foundation
import Ubiquity

// The library's types under names that do not meet the engine's (this file imports only the
// library, as an app would).
typealias LibraryQuery = MetadataQuery
typealias LibraryStore = KeyValueStore
typealias LibraryEntry = Ubiquity
