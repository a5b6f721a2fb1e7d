package ingest

import (
	"fmt"
	"sync"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/registry"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Registries holds one registry client per registry configuration, shared
// by every table that reads through it, so that a schema is fetched once
// per agent whatever the number of tables and decoders.
type Registries struct {
	mu      sync.Mutex
	clients map[spec.SchemaRegistry]*registry.Client
}

// client returns the client of cfg, made on first use.
func (r *Registries) client(cfg spec.SchemaRegistry) (*registry.Client, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.clients[cfg]; ok {
		return c, nil
	}
	c, err := registry.New(registry.Config{URL: cfg.URL, APIKey: cfg.APIKey, APISecret: cfg.APISecret, CAPEM: cfg.CAPEM})
	if err != nil {
		return nil, err
	}
	if r.clients == nil {
		r.clients = map[spec.SchemaRegistry]*registry.Client{}
	}
	r.clients[cfg] = c
	return c, nil
}

// TableRegistries returns the registries table t's transformers use, by
// the connection_name of their schema_registry block ("" for the
// pipeline's connection conn), from conn and named, the registries of the
// other connections the pipeline names.
func TableRegistries(t *spec.Table, conn *spec.Connection, named map[string]spec.SchemaRegistry) map[string]spec.SchemaRegistry {
	var out map[string]spec.SchemaRegistry
	ko := &t.ConnectorOptions.KafkaOptions
	for _, tr := range []*spec.Transformer{ko.KeyTransformer, ko.ValueTransformer} {
		reg := tr.Registry()
		if reg == nil {
			continue
		}
		var (
			cfg spec.SchemaRegistry
			ok  bool
		)
		if reg.ConnectionName == "" || reg.ConnectionName == conn.Name {
			if conn.SchemaRegistry != nil {
				cfg, ok = *conn.SchemaRegistry, true
			}
		} else {
			cfg, ok = named[reg.ConnectionName]
		}
		if ok {
			if out == nil {
				out = map[string]spec.SchemaRegistry{}
			}
			out[reg.ConnectionName] = cfg
		}
	}
	return out
}

// ClientsOf returns the function [decode.Resolve] looks registry
// clients up with, for a table whose registries are regs.
func (r *Registries) ClientsOf(regs map[string]spec.SchemaRegistry) func(string) (*registry.Client, error) {
	return func(name string) (*registry.Client, error) {
		cfg, ok := regs[name]
		if !ok {
			if name == "" {
				return nil, fmt.Errorf("the pipeline's connection has no schema_registry")
			}
			return nil, fmt.Errorf("connection %q has no schema_registry", name)
		}
		return r.client(cfg)
	}
}
