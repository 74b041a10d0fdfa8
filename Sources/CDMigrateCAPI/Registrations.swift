import CDMigrate

public typealias DestroyFunction = @convention(c) (UnsafeMutableRawPointer?) -> Void
public typealias HookFunction = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32
public typealias InstanceHookFunction =
    @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeMutableRawPointer?) -> Int32
public typealias HostFunction =
    @convention(c) (OpaquePointer?, Int32, UnsafePointer<OpaquePointer?>?, OpaquePointer?, UnsafeMutableRawPointer?) ->
    Int32
public typealias ProgressFunction = @convention(c) (UnsafeRawPointer?, UnsafeMutableRawPointer?) -> Int32

/// `cdm_policy` of cdmigrate.h, field for field (checked by cdm_internal_abi_check in the C tests).
struct PolicyHooks {
    var begin: HookFunction?
    var createDestinationInstances: InstanceHookFunction?
    var endInstanceCreation: HookFunction?
    var createRelationships: InstanceHookFunction?
    var endRelationshipCreation: HookFunction?
    var performCustomValidation: HookFunction?
    var end: HookFunction?
    /// Appended after `end`: a host built against an older header passes a smaller struct.
    var createDestinationInstancesBatch: BatchHookFunction?

    /// Copies the host's struct; a smaller one (from an older header) leaves the later hooks NULL.
    init(copying pointer: UnsafeRawPointer, size: Int) {
        var hooks = PolicyHooks(
            begin: nil, createDestinationInstances: nil, endInstanceCreation: nil, createRelationships: nil,
            endRelationshipCreation: nil, performCustomValidation: nil, end: nil, createDestinationInstancesBatch: nil)
        withUnsafeMutableBytes(of: &hooks) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: min(size, target.count)))
        }
        self = hooks
    }

    init(
        begin: HookFunction?, createDestinationInstances: InstanceHookFunction?, endInstanceCreation: HookFunction?,
        createRelationships: InstanceHookFunction?, endRelationshipCreation: HookFunction?,
        performCustomValidation: HookFunction?, end: HookFunction?, createDestinationInstancesBatch: BatchHookFunction?
    ) {
        self.begin = begin
        self.createDestinationInstances = createDestinationInstances
        self.endInstanceCreation = endInstanceCreation
        self.createRelationships = createRelationships
        self.endRelationshipCreation = endRelationshipCreation
        self.performCustomValidation = performCustomValidation
        self.end = end
        self.createDestinationInstancesBatch = createDestinationInstancesBatch
    }
}

/// `cdm_progress` of cdmigrate.h.
struct ProgressRecord {
    var fraction: Double
    var stage: Int32
    var pass: Int32
    var entityMapping: UnsafePointer<CChar>?
    var processed: Int64
    var total: Int64
    var runProcessed: Int64
    var runTotal: Int64
    var step: Int32
    var stepCount: Int32
}

/// A host pointer the library owns from registration on: destroyed exactly once, when the last
/// reference (the migration, a running policy) lets go.
class Registration {
    let user: UnsafeMutableRawPointer?
    let destroy: DestroyFunction?

    init(user: UnsafeMutableRawPointer?, destroy: DestroyFunction?) {
        self.user = user
        self.destroy = destroy
    }

    deinit { destroy?(user) }
}

final class PolicyRegistration: Registration {
    let name: String
    let hooks: PolicyHooks

    init(name: String, hooks: PolicyHooks, user: UnsafeMutableRawPointer?, destroy: DestroyFunction?) {
        self.name = name
        self.hooks = hooks
        super.init(user: user, destroy: destroy)
    }
}

final class FunctionRegistration: Registration {
    let function: HostFunction
    let label: String

    init(function: HostFunction, label: String, user: UnsafeMutableRawPointer?, destroy: DestroyFunction?) {
        self.function = function
        self.label = label
        super.init(user: user, destroy: destroy)
    }
}

final class ProgressRegistration: Registration {
    let callback: ProgressFunction

    init(callback: ProgressFunction, user: UnsafeMutableRawPointer?, destroy: DestroyFunction?) {
        self.callback = callback
        super.init(user: user, destroy: destroy)
    }
}
