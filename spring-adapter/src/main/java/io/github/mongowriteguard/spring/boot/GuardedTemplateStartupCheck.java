package io.github.mongowriteguard.spring.boot;

import io.github.mongowriteguard.spring.data.GuardedMongoTemplate;
import java.util.Map;
import java.util.function.Consumer;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;

/**
 * At startup, once every singleton exists, checks each guarded template bean (the one repositories use too) the way
 * its first write would: a {@code MongoClient} bean of the application that was not built through
 * {@code WriteGuard.configure} stops the application here, with the Spring fix, instead of failing every write. One
 * check for {@link GuardedMongoTemplate} beans, one for {@code GuardedReactiveMongoTemplate} beans (made only when the
 * reactive driver is on the class path).
 *
 * @param <T> the template class
 */
final class GuardedTemplateStartupCheck<T> implements SmartInitializingSingleton {
    private final ListableBeanFactory beans;
    private final Class<T> templateClass;
    private final Consumer<T> check;

    GuardedTemplateStartupCheck(ListableBeanFactory beans, Class<T> templateClass, Consumer<T> check) {
        this.beans = beans;
        this.templateClass = templateClass;
        this.check = check;
    }

    static GuardedTemplateStartupCheck<GuardedMongoTemplate> synchronous(ListableBeanFactory beans) {
        return new GuardedTemplateStartupCheck<>(
                beans, GuardedMongoTemplate.class, GuardedMongoTemplate::checkGuardable);
    }

    @Override
    public void afterSingletonsInstantiated() {
        Map<String, T> templates = beans.getBeansOfType(templateClass, false, false);
        String kind = templateClass == GuardedMongoTemplate.class ? "MongoTemplate" : "ReactiveMongoTemplate";
        templates.forEach((name, template) -> {
            try {
                check.accept(template);
            } catch (IllegalStateException | IllegalArgumentException refused) {
                throw new WriteGuardConfigurationException(
                        null,
                        "The guarded " + kind + " bean '" + name + "' cannot write through the guard: "
                                + refused.getMessage(),
                        "If the application declares its own MongoClient bean (synchronous or reactive), build it"
                                + " through the guard: inject WriteGuard into that @Bean method and return"
                                + " MongoClients.create(writeGuard.configure(settingsBuilder).build()); or remove the"
                                + " bean and change Spring Boot's client with a MongoClientSettingsBuilderCustomizer"
                                + " bean (spring.mongodb.* properties), which the guard configures for you. A"
                                + " MongoDatabaseFactory of your own that is not Spring's"
                                + " SimpleMongoClientDatabaseFactory does not name its client: build the template with"
                                + " new GuardedMongoTemplate(factory, converter, writeGuard, client)."
                                + " mongo.write-guard.enabled=false turns the guard off",
                        refused);
            }
        });
    }
}
