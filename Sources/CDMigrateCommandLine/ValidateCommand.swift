import ArgumentParser
import CDMigrate

/// `cdmigrate validate`: the models and mapping models, checked against each other, without a store.
struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check models and mapping models against each other, without running.",
        discussion: """
            Every problem is reported with the file and the JSON path at fault; warnings (a mapping \
            without a source expression, a version hash that differs from the computed one, …) are \
            printed but do not fail. With --policies, the libraries are loaded and every policy an \
            entity mapping names must be registered by one of them (as migrate requires: error \
            134170, exit 1); without, a mapping naming a policy is a warning.

            With --models (as migrate --models) the plan from every version of the set to the \
            target (--to-version, else the current version) is made as for a store of that version: \
            each step's mapping models are checked against its two models, and the warnings of \
            cdmigrate plan are printed.

            Examples:
              cdmigrate validate --source-model Model.xcdatamodeld/v1.xcdatamodel \\
                        --destination-model Model.xcdatamodeld/v2.xcdatamodel \\
                        --mapping v1-v2.json
              cdmigrate validate --source-model v1.json --destination-model v2.json \\
                        --mapping v1-v2.json --policies ./libnotepolicies.so --json
              cdmigrate validate --models Model.xcdatamodeld --policies ./libnotepolicies.so

            \(ExitStatus.table)
            """
    )

    @OptionGroup var models: ModelOptions

    @OptionGroup var policies: PolicyOptions

    @Option(
        name: .customLong("models"),
        help: ArgumentHelp(
            "A model set (as migrate --models): every version's steps to the target, with their mapping models, are checked.",
            valueName: "path"), completion: .file())
    var modelSet: String?

    @OptionGroup var mappings: MappingFolderOptions

    @Option(
        name: .customLong("to-version"),
        help: ArgumentHelp("With --models: the version to reach (default: the current one).", valueName: "name"))
    var targetVersion: String?

    @Flag(help: "Print the result as JSON on standard output.")
    var json = false

    @Flag(help: "Print nothing but errors.")
    var quiet = false

    func validate() throws {
        if modelSet != nil {
            if models.isGiven {
                throw ValidationError("give either --models or --source-model/--destination-model/--mapping, not both")
            }
        } else {
            if targetVersion != nil { throw ValidationError("--to-version goes with --models") }
            if !mappings.folders.isEmpty { throw ValidationError("--mappings goes with --models") }
            try models.validateStep()
        }
    }

    func run() throws {
        let output = Output(json: json, quiet: quiet)
        do {
            if let modelSet = modelSet { return try validateSet(modelSet, output) }
            let manager = try models.manager()
            let hosted = try policies.register(on: manager)
            if hosted != nil,
                let error = MigrationError.collecting(
                    PolicyOptions.unregistered(manager), code: .entityMigrationPolicy,
                    summary: "policies are missing")
            {
                throw error
            }
            let warnings = manager.warnings + (hosted == nil ? PolicyOptions.unchecked(manager.mappingModels) : [])
            for warning in warnings { output.warning(warning) }
            let entityMappings = manager.mappingModels.reduce(0) { $0 + $1.entityMappings.count }
            output.line(
                "ok: \(manager.mappingModels.count) mapping model(s), \(entityMappings) entity mappings fit both models"
            )
            output.document(["ok": true, "warnings": warnings, "entityMappings": entityMappings])
        } catch {
            let error = MigrationError.from(error)
            output.error(error)
            output.document(["ok": false, "error": Output.errorObject(error)])
            throw ExitStatus(error).exitCode
        }
    }

    /// `--models`: the plan from every version to the target, as `migrate --models` would make it
    /// for a store of that version; each step's mapping models bound to its models, the warnings
    /// of `plan`, and with --policies every policy a step names registered.
    private func validateSet(_ path: String, _ output: Output) throws {
        let set = try ModelSet(contentsOf: path, mappingFolders: mappings.folders)
        let hosted = try policies.registerChain(through: set, targetVersion: targetVersion)
        var warnings: [String] = []
        var problems: [MigrationError] = []
        var steps = Set<String>()
        var target = set.currentVersionName
        for version in set.versionNames {
            let plan: MigrationPlan
            do {
                plan = try MigrationPlan(
                    storePath: path, storeVersion: version, models: set, targetVersion: targetVersion)
            } catch {
                problems.append(MigrationError.from(error))
                continue
            }
            target = plan.targetVersionName
            for warning in try plan.allWarnings() where !warnings.contains(warning) { warnings.append(warning) }
            for stage in plan.stages where steps.insert(stage.warningLabel).inserted {
                for name in stage.policyNames {
                    if let hosted = hosted {
                        if !hosted.registersPolicy(named: name) {
                            problems.append(
                                MigrationError(
                                    .entityMigrationPolicy,
                                    "\(stage.sourceVersionName) → \(stage.destinationVersionName): mapping model \(stage.mappingModelNames.joined(separator: ", ")) names policy '\(name)', which no --policies registered"
                                ))
                        }
                    } else {
                        let warning =
                            stage.warningLabel
                            + "names policy '\(name)': give --policies to check that it is registered"
                        if !warnings.contains(warning) { warnings.append(warning) }
                    }
                }
            }
        }
        withExtendedLifetime(hosted) {}
        if let error = MigrationError.collecting(
            problems, code: problems.first?.code ?? .invalidMapping, summary: "the model set '\(path)' has problems")
        {
            throw error
        }
        for warning in warnings { output.warning(warning) }
        output.line(
            "ok: \(steps.count) step(s) from \(set.versionNames.count) version(s) to \(target) fit their models")
        output.document([
            "ok": true, "warnings": warnings, "versions": set.versionNames, "targetVersion": target,
            "steps": steps.count,
        ])
    }
}
