package io.github.mongowriteguard.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.methods;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaMethod;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;

/**
 * The package rules of the core module, checked on every build: what a user types, catches or reads never exposes an
 * internal type, and the {@code internal} packages hold nothing a user needs.
 */
class ArchitectureTest {
    private static final JavaClasses CORE = new ClassFileImporter()
        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
        .importPackages("io.github.mongowriteguard");

    @Test
    void publicMethodsOfPublicTypes_neverReturnOrTakeAnInternalType() {
        methods().that().arePublic().and().areDeclaredInClassesThat().arePublic()
            .and().areDeclaredInClassesThat().resideOutsideOfPackage("io.github.mongowriteguard.internal..")
            .should(new ArchCondition<JavaMethod>("neither return nor take a type of an internal package") {
                @Override
                public void check(JavaMethod method, ConditionEvents events) {
                    List<JavaClass> types = new ArrayList<>(method.getRawParameterTypes());
                    types.add(method.getRawReturnType());
                    for (JavaClass type : types) {
                        if (type.getPackageName().contains(".internal")) {
                            events.add(SimpleConditionEvent.violated(method, method.getFullName() + " exposes " + type.getName()));
                        }
                    }
                }
            })
            .check(CORE);
    }

    @Test
    void internalServerFacts_dependOnNothingOfTheGuard() {
        noClasses().that().resideInAPackage("io.github.mongowriteguard.internal.server..")
            .should().dependOnClassesThat().resideInAPackage("io.github.mongowriteguard..")
            .andShould().dependOnClassesThat().resideOutsideOfPackages("io.github.mongowriteguard.internal.server..", "java..")
            .allowEmptyShould(true)
            .check(CORE);
    }

    @Test
    void theBulkPlanner_dependsOnNoExecutionCopiesOrMetrics() {
        noClasses().that().resideInAPackage("io.github.mongowriteguard.bulk..")
            .should().dependOnClassesThat().resideInAnyPackage("io.github.mongowriteguard.internal..",
                "io.github.mongowriteguard.copies..", "io.github.mongowriteguard.metrics..", "io.github.mongowriteguard.outcome..")
            .check(CORE);
    }

    @Test
    void internalSubpackages_haveNoCycles() {
        slices().matching("io.github.mongowriteguard.internal.(*)..").should().beFreeOfCycles().check(CORE);
    }
}
