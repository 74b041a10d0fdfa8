import CDMigrate

// Methods of C policies: what FUNCTION($entityPolicy, "selector:", …) calls in a value
// expression of an entity mapping whose policy is a C (or Python) policy.

public typealias PolicyMethodFunction =
    @convention(c) (
        OpaquePointer?, UnsafePointer<CChar>?, Int32, UnsafePointer<OpaquePointer?>?,
        OpaquePointer?, UnsafeMutableRawPointer?
    ) -> Int32

final class PolicyMethodRegistration: Registration {
    let function: PolicyMethodFunction

    init(function: PolicyMethodFunction, user: UnsafeMutableRawPointer?, destroy: DestroyFunction?) {
        self.function = function
        super.init(user: user, destroy: destroy)
    }
}

/// The methods registered per policy name: by selector, and one for any other selector.
struct PolicyMethodTable {
    private var methods: [String: [String: PolicyMethodRegistration]] = [:]
    private var fallbacks: [String: PolicyMethodRegistration] = [:]

    /// Registers (or, for the same policy and selector, replaces) a method; a nil selector
    /// answers every selector without one of its own.
    mutating func register(_ registration: PolicyMethodRegistration, policy: String, selector: String?) {
        if let selector = selector {
            methods[policy, default: [:]][selector] = registration
        } else {
            fallbacks[policy] = registration
        }
    }

    func method(policy: String, selector: String) -> PolicyMethodRegistration? {
        methods[policy]?[selector] ?? fallbacks[policy]
    }
}

/// What a policy method returns to say that the policy has no method for the selector.
private let notAnswered: Int32 = 102  // CDM_NOTFOUND

extension MigrationHandle {
    /// Calls the policy's method for `selector` with the arguments as value handles; nil when the
    /// policy has none (or its method returned CDM_NOTFOUND), so the engine reports it.
    func performPolicyMethod(policy: String, selector: String, arguments: [Value]) throws -> Value? {
        guard let registration = policyMethods.method(policy: policy, selector: selector) else { return nil }
        var result: Value = .null
        var answered = true
        try callback(manager?.currentEntityMapping, "policy \(policy) method \(selector)") { context, scope in
            var handles: [OpaquePointer?] = arguments.map { scope.handle(ValueEntry($0, writable: false)) }
            let resultEntry = ValueEntry(.null, writable: true)
            let resultHandle = scope.handle(resultEntry)
            let code = selector.withCString { name in
                handles.withUnsafeMutableBufferPointer { buffer in
                    registration.function(
                        context, name, Int32(arguments.count), UnsafePointer(buffer.baseAddress), resultHandle,
                        registration.user)
                }
            }
            result = resultEntry.value
            if code == notAnswered {
                answered = false
                return 0
            }
            return code
        }
        guard answered else { return nil }
        return result
    }
}

@_cdecl("cdm_migration_register_policy_method")
public func cdm_migration_register_policy_method(
    _ migration: OpaquePointer?, _ policy: UnsafePointer<CChar>?, _ selector: UnsafePointer<CChar>?,
    _ function: PolicyMethodFunction?, _ user: UnsafeMutableRawPointer?,
    _ destroy: DestroyFunction?
) -> Int32 {
    var taken = false
    let code = withHandle(migration, MigrationHandle.self, "migration") { handle in
        let policyName = try CString.argument(policy, "the policy name")
        let selectorText = try selector.map { try CString.argument($0, "the selector") }
        if selectorText?.isEmpty == true {
            throw MigrationError(.invalidArgument, "the selector is empty (NULL stands for every selector)")
        }
        guard let function = function else { throw MigrationError.misuse("the method function pointer is NULL") }
        try handle.checkIdle()
        taken = true
        handle.policyMethods.register(
            PolicyMethodRegistration(function: function, user: user, destroy: destroy),
            policy: policyName, selector: selectorText)
    }
    if !taken { destroy?(user) }
    return code
}
