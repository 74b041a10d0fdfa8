/// What an expression can see beyond its evaluated object: the variables of a migration
/// (`$source`, `$destination`, `$manager`, `$entityMapping`, `$propertyMapping`, `$entityPolicy`)
/// and the host's registered functions. The migration manager implements it.
package protocol ExpressionEnvironment: AnyObject {
    /// $name without the $: $source/$destination give .object(...); nil when the environment does not know it.
    func variable(_ name: String) throws -> Value?
    /// Key paths on non-value variables ($manager.sourceContext, $entityMapping.name, $entityMapping.userInfo.modelVersion); nil to let the evaluator apply the keys to `variable(name)`.
    func keyPath(_ keys: [String], onVariable name: String) throws -> Value?
    /// FUNCTION($manager, …), FUNCTION($entityPolicy, …); nil to let the evaluator apply a value selector to `variable(name)`.
    func invoke(selector: String, onVariable name: String, arguments: [Value]) throws -> Value?
    /// FUNCTION(CAST("Class", "Class"), "selector:", …): a host-registered function.
    func invokeHostFunction(className: String, selector: String, arguments: [Value]) throws -> Value
}
