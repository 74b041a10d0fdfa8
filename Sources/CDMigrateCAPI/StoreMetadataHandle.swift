import CDMigrate

/// `cdm_store_entity_info` of cdmigrate.h.
struct StoreEntityInfo {
    var name: UnsafePointer<CChar>?
    var superentity: UnsafePointer<CChar>?
    var entityNumber: Int32
    var rowCount: Int64
    var versionHash: UnsafePointer<UInt8>?
    var versionHashLength: Int
}

/// `cdm_version_difference` of cdmigrate.h.
struct VersionDifferenceInfo {
    var entity: UnsafePointer<CChar>?
    var storeHash: UnsafePointer<UInt8>?
    var storeHashLength: Int
    var modelHash: UnsafePointer<UInt8>?
    var modelHashLength: Int
}

/// cdm_store_metadata: what a store says about itself (`StoreInfo`), read without a model and
/// without migrating, and the outcome of the last comparison with a model. Strings and hashes
/// handed out are copies the handle owns until it is freed.
final class StoreMetadataHandle: LongLivedHandle {
    override class var kind: String { "cdm_store_metadata" }
    var info: StoreInfo?
    /// Every entity the store names: those with a version hash and those `Z_PRIMARYKEY` lists, in name order.
    private(set) var entities: [StoreEntityInfo] = []
    private(set) var identifiers: [UnsafePointer<CChar>] = []
    private(set) var uuid: UnsafePointer<CChar>?
    private(set) var storeType: UnsafePointer<CChar>?
    /// The differences found by the last cdm_store_metadata_check_model.
    private(set) var differences: [VersionDifferenceInfo] = []
    /// The version the last cdm_store_metadata_version_in found.
    var matchingVersion: UnsafePointer<CChar>?
    private var owned: [UnsafeMutableRawPointer] = []

    deinit { for pointer in owned { pointer.deallocate() } }

    func string(_ text: String) -> UnsafePointer<CChar> {
        let copy = CString.copy(text)
        owned.append(UnsafeMutableRawPointer(copy))
        return UnsafePointer(copy)
    }

    func bytes(_ bytes: [UInt8]?) -> (UnsafePointer<UInt8>?, Int) {
        guard let bytes, let raw = CString.copyBytes(bytes) else { return (nil, 0) }
        owned.append(raw)
        return (UnsafePointer(raw.assumingMemoryBound(to: UInt8.self)), bytes.count)
    }

    func load(_ info: StoreInfo) {
        self.info = info
        uuid = string(info.metadata.storeUUID)
        storeType = string(info.metadata.storeType)
        identifiers = info.metadata.versionIdentifiers.map { string($0) }
        let listed = Dictionary(info.entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let names = Set(info.metadata.versionHashes.keys).union(listed.keys).sorted(by: VersionHash.nameOrder)
        entities = names.map { name in
            let entity = listed[name]
            let (hash, length) = bytes(info.metadata.versionHashes[name])
            return StoreEntityInfo(
                name: string(name), superentity: entity?.superentityName.map { string($0) },
                entityNumber: Int32(clamping: entity?.entityNumber ?? 0),
                rowCount: entity.map { Int64($0.rowCount) } ?? -1,
                versionHash: hash, versionHashLength: length)
        }
    }

    func record(_ found: [ManagedObjectModel.VersionDifference]) {
        differences = found.map { difference in
            let (store, storeLength) = bytes(difference.storeHash)
            let (model, modelLength) = bytes(difference.modelHash)
            return VersionDifferenceInfo(
                entity: string(difference.entityName), storeHash: store, storeHashLength: storeLength,
                modelHash: model, modelHashLength: modelLength)
        }
    }

    /// The metadata, or `.misuse` when loading it failed.
    func loadedInfo() throws -> StoreInfo {
        guard let info else {
            throw MigrationError.misuse("the store metadata handle holds metadata that failed to load")
        }
        return info
    }

    static func loaded(_ pointer: OpaquePointer?) throws -> (StoreMetadataHandle, StoreInfo) {
        let handle = try required(pointer, "store metadata")
        return (handle, try handle.loadedInfo())
    }

    /// A getter of cdmigrate.h: writes what `value` gives for the loaded metadata to `out`.
    static func get<T>(
        _ pointer: OpaquePointer?, _ out: UnsafeMutablePointer<T>?, _ what: String,
        _ value: (StoreMetadataHandle, StoreInfo) -> T
    ) -> Int32 {
        guarded(nil) {
            let (handle, info) = try loaded(pointer)
            try CDMigrateCAPI.required(out, what).pointee = value(handle, info)
        }
    }

    /// An indexed getter of cdmigrate.h: writes item `i` of what `items` lists to `out` (the
    /// parameter called `outName`), or fails with `.notFound` naming `what` and saying how many
    /// there are (`count` completes the message).
    static func item<T>(
        _ pointer: OpaquePointer?, _ i: Int, _ out: UnsafeMutableRawPointer?, _ type: T.Type, _ outName: String,
        _ what: String,
        items: (StoreMetadataHandle) -> [T], count: (Int) -> String
    ) -> Int32 {
        guarded(nil) {
            let (handle, _) = try loaded(pointer)
            let target = try CDMigrateCAPI.required(out?.assumingMemoryBound(to: T.self), outName)
            let list = items(handle)
            guard i >= 0, i < list.count else {
                throw MigrationError.notFound("\(what) index \(i) is out of range: \(count(list.count))")
            }
            target.pointee = list[i]
        }
    }
}

@_cdecl("cdm_store_metadata_read")
public func cdm_store_metadata_read(_ path: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?)
    -> Int32
{
    construct(out, StoreMetadataHandle()) { handle in
        handle.load(try StoreInfo(contentsOf: try CString.argument(path, "the store path")))
    }
}

@_cdecl("cdm_store_metadata_free")
public func cdm_store_metadata_free(_ metadata: OpaquePointer?) {
    StoreMetadataHandle.release(metadata, "store metadata")
}

@_cdecl("cdm_store_metadata_errcode")
public func cdm_store_metadata_errcode(_ metadata: OpaquePointer?) -> Int32 {
    StoreMetadataHandle.unretained(metadata)?.errcode ?? 101
}
@_cdecl("cdm_store_metadata_errmsg")
public func cdm_store_metadata_errmsg(_ metadata: OpaquePointer?) -> UnsafePointer<CChar> {
    StoreMetadataHandle.unretained(metadata)?.errmsg
        ?? CString.interned("the store metadata handle is NULL or not a live cdm_store_metadata")
}
@_cdecl("cdm_store_metadata_error")
public func cdm_store_metadata_error(_ metadata: OpaquePointer?) -> OpaquePointer? {
    StoreMetadataHandle.unretained(metadata)?.lastError?.pointer
}

@_cdecl("cdm_store_metadata_uuid")
public func cdm_store_metadata_uuid(_ metadata: OpaquePointer?, _ uuid: UnsafeMutablePointer<UnsafePointer<CChar>?>?)
    -> Int32
{
    StoreMetadataHandle.get(metadata, uuid, "uuid") { handle, _ in handle.uuid }
}

@_cdecl("cdm_store_metadata_type")
public func cdm_store_metadata_type(_ metadata: OpaquePointer?, _ type: UnsafeMutablePointer<UnsafePointer<CChar>?>?)
    -> Int32
{
    StoreMetadataHandle.get(metadata, type, "type") { handle, _ in handle.storeType }
}

@_cdecl("cdm_store_metadata_is_empty")
public func cdm_store_metadata_is_empty(_ metadata: OpaquePointer?, _ empty: UnsafeMutablePointer<Int32>?) -> Int32 {
    StoreMetadataHandle.get(metadata, empty, "empty") { _, info in info.metadata.isEmpty ? 1 : 0 }
}

@_cdecl("cdm_store_metadata_identifier_count")
public func cdm_store_metadata_identifier_count(_ metadata: OpaquePointer?, _ count: UnsafeMutablePointer<Int>?)
    -> Int32
{
    StoreMetadataHandle.get(metadata, count, "count") { handle, _ in handle.identifiers.count }
}

@_cdecl("cdm_store_metadata_identifier_at")
public func cdm_store_metadata_identifier_at(
    _ metadata: OpaquePointer?, _ i: Int, _ identifier: UnsafeMutablePointer<UnsafePointer<CChar>?>?
) -> Int32 {
    StoreMetadataHandle.item(
        metadata, i, identifier.map { UnsafeMutableRawPointer($0) }, UnsafePointer<CChar>.self, "identifier",
        "version identifier", items: { $0.identifiers }, count: { "the store has \($0)" })
}

@_cdecl("cdm_store_metadata_entity_count")
public func cdm_store_metadata_entity_count(_ metadata: OpaquePointer?, _ count: UnsafeMutablePointer<Int>?) -> Int32 {
    StoreMetadataHandle.get(metadata, count, "count") { handle, _ in handle.entities.count }
}

@_cdecl("cdm_store_metadata_entity_at")
public func cdm_store_metadata_entity_at(_ metadata: OpaquePointer?, _ i: Int, _ info: UnsafeMutableRawPointer?)
    -> Int32
{
    StoreMetadataHandle.item(
        metadata, i, info, StoreEntityInfo.self, "info", "entity", items: { $0.entities },
        count: { "the store names \($0) entities" })
}

@_cdecl("cdm_store_metadata_check_model")
public func cdm_store_metadata_check_model(
    _ metadata: OpaquePointer?, _ model: OpaquePointer?, _ compatible: UnsafeMutablePointer<Int32>?,
    _ differenceCount: UnsafeMutablePointer<Int>?
) -> Int32 {
    withHandle(metadata, StoreMetadataHandle.self, "store metadata") { handle in
        let info = try handle.loadedInfo()
        let loaded = try ModelHandle.loaded(model)
        let out = try required(compatible, "compatible")
        let count = try required(differenceCount, "difference count")
        handle.record(loaded.versionDifferences(fromStoreMetadata: info.metadata))
        out.pointee = loaded.isCompatible(withStoreMetadata: info.metadata) ? 1 : 0
        count.pointee = handle.differences.count
    }
}

@_cdecl("cdm_store_metadata_difference_at")
public func cdm_store_metadata_difference_at(
    _ metadata: OpaquePointer?, _ i: Int, _ difference: UnsafeMutableRawPointer?
) -> Int32 {
    StoreMetadataHandle.item(
        metadata, i, difference, VersionDifferenceInfo.self, "difference", "difference",
        items: { $0.differences }, count: { "the last check found \($0)" })
}

@_cdecl("cdm_store_metadata_version_in")
public func cdm_store_metadata_version_in(
    _ metadata: OpaquePointer?, _ modelSetPath: UnsafePointer<CChar>?,
    _ version: UnsafeMutablePointer<UnsafePointer<CChar>?>?
) -> Int32 {
    withHandle(metadata, StoreMetadataHandle.self, "store metadata") { handle in
        let info = try handle.loadedInfo()
        let path = try CString.argument(modelSetPath, "the model set path")
        let out = try required(version, "version")
        out.pointee = nil
        let versions = try ModelVersionSet(contentsOf: path)
        out.pointee = versions.versionName(forStoreMetadata: info.metadata).map { handle.string($0) }
    }
}
