package io.github.mongowriteguard.kafka.connect;

import com.mongodb.kafka.connect.MongoSinkConnector;
import com.mongodb.kafka.connect.sink.MongoSinkConfig;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.sink.SinkConnector;

/**
 * The guarded MongoDB sink: a drop-in for {@code com.mongodb.kafka.connect.MongoSinkConnector} (change
 * {@code connector.class}, keep every other setting). Every setting of the official sink keeps its meaning, because
 * the official classes read them and turn records into writes; only the writes go through the guard. The guard's own
 * settings are under {@value GuardedSinkSettings#PREFIX}.
 */
public class GuardedMongoSinkConnector extends SinkConnector {

    private Map<String, String> settings = Map.of();

    /** A connector Connect instantiates by its class name. */
    public GuardedMongoSinkConnector() {}

    @Override
    public String version() {
        return Versions.version();
    }

    @Override
    public void start(Map<String, String> props) {
        GuardedSinkSettings.from(props); // refuses bad guard settings before any task starts
        new MongoSinkConfig(props); // and the official sink's own checks
        settings = Map.copyOf(props);
    }

    @Override
    public Class<? extends Task> taskClass() {
        return GuardedMongoSinkTask.class;
    }

    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks) {
        List<Map<String, String>> configs = new ArrayList<>(maxTasks);
        for (int i = 0; i < maxTasks; i++) {
            configs.add(new HashMap<>(settings));
        }
        return configs;
    }

    @Override
    public void stop() {}

    @Override
    public ConfigDef config() {
        ConfigDef merged = new ConfigDef(MongoSinkConfig.CONFIG);
        GuardedSinkSettings.CONFIG.configKeys().values().forEach(merged::define);
        return merged;
    }

    @Override
    public Config validate(Map<String, String> connectorConfigs) {
        Config official = new MongoSinkConnector().validate(connectorConfigs);
        List<ConfigValue> values = new ArrayList<>(official.configValues());
        List<ConfigValue> guard = GuardedSinkSettings.CONFIG.validate(connectorConfigs);
        values.addAll(guard);
        try {
            GuardedSinkSettings.from(connectorConfigs);
        } catch (ConfigException e) {
            List<String> unknown = connectorConfigs.keySet().stream()
                    .filter(key -> key.startsWith(GuardedSinkSettings.PREFIX)
                            && !GuardedSinkSettings.CONFIG.names().contains(key))
                    .sorted()
                    .toList();
            if (!unknown.isEmpty()) {
                // the error names every defined setting, so it goes on each unknown key itself (Connect's validate
                // response lists a value without a definition, with its errors), not on a setting that is fine
                for (String key : unknown) {
                    values.add(new ConfigValue(key, connectorConfigs.get(key), List.of(), List.of(e.getMessage())));
                }
            } else {
                ConfigValue target = guard.stream()
                        .filter(v -> e.getMessage() != null && e.getMessage().contains(v.name()))
                        .findFirst()
                        .orElse(guard.get(0));
                target.addErrorMessage(e.getMessage());
            }
        }
        return new Config(values);
    }
}
