package provider

import (
	"context"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// catalogResourceModel is the state of tributary_catalog.
type catalogResourceModel struct {
	ID            types.String `tfsdk:"id"`
	Name          types.String `tfsdk:"name"`
	IcebergREST   types.Object `tfsdk:"iceberg_rest"`
	HiveMetastore types.Object `tfsdk:"hive_metastore"`
	OnDelete      types.String `tfsdk:"on_delete"`
}

// icebergRESTModel is iceberg_rest of a catalog. Token is write-only on
// the agent: the state keeps the value Terraform last sent.
type icebergRESTModel struct {
	URI            types.String `tfsdk:"uri"`
	Warehouse      types.String `tfsdk:"warehouse"`
	Token          types.String `tfsdk:"token"`
	TokenWO        types.String `tfsdk:"token_wo"`
	TokenWOVersion types.Int64  `tfsdk:"token_wo_version"`
}

// hiveMetastoreModel is hive_metastore of a catalog.
type hiveMetastoreModel struct {
	URI types.String `tfsdk:"uri"`
}

// catalogAttrType is the object type of the catalog's object attribute
// name ("iceberg_rest").
var catalogAttrType = func() func(string) types.ObjectType {
	whole := sync.OnceValue(func() types.ObjectType { return catalogResourceSchema().Type().(types.ObjectType) })
	return func(name string) types.ObjectType { return attrObjectType(whole(), name) }
}()

// toSpec converts m, recording unknown paths in c; a token set through
// token_wo comes from the configuration (see secretKind.writeOnlyFromConfig).
func (m *catalogResourceModel) toSpec(c *specConverter) *spec.Catalog {
	return &spec.Catalog{
		Name:     c.str("name", m.Name),
		OnDelete: c.str("on_delete", m.OnDelete),
		IcebergREST: convertObject(c, "iceberg_rest", m.IcebergREST, func(r *icebergRESTModel) *spec.IcebergREST {
			return &spec.IcebergREST{
				URI:       c.str("iceberg_rest.uri", r.URI),
				Warehouse: c.str("iceberg_rest.warehouse", r.Warehouse),
				Token:     c.secret("iceberg_rest.token", r.Token, r.TokenWO),
			}
		}),
		HiveMetastore: convertObject(c, "hive_metastore", m.HiveMetastore, func(h *hiveMetastoreModel) *spec.HiveMetastore {
			return &spec.HiveMetastore{URI: c.str("hive_metastore.uri", h.URI)}
		}),
	}
}

// secretObjects returns the objects of m that hold secrets, by attribute
// name (see newPriorValues).
func (m *catalogResourceModel) secretObjects() map[string]attr.Value {
	return map[string]attr.Value{"iceberg_rest": m.IcebergREST}
}

// setFromSpec sets m from a catalog as the agent stores it; the token,
// which the agent never returns, is kept as connectionResourceModel's
// secrets are (see its setFromSpec).
func (m *catalogResourceModel) setFromSpec(ctx context.Context, cat *spec.Catalog, refresh bool, diags *diag.Diagnostics) {
	prior := newPriorValues(m.secretObjects(), cat.SecretsSet, refresh)
	m.ID = types.StringValue(cat.Name)
	m.Name = types.StringValue(cat.Name)
	m.OnDelete = types.StringValue(cat.OnDelete)
	m.IcebergREST = types.ObjectNull(catalogAttrType("iceberg_rest").AttrTypes)
	if r := cat.IcebergREST; r != nil {
		m.IcebergREST = objectValue(ctx, diags, catalogAttrType("iceberg_rest"), icebergRESTModel{
			URI:            types.StringValue(r.URI),
			Warehouse:      stringOrNull(r.Warehouse),
			Token:          prior.secret("iceberg_rest.token", r.Token),
			TokenWO:        types.StringNull(),
			TokenWOVersion: prior.woVersion("iceberg_rest.token"),
		})
	}
	m.HiveMetastore = types.ObjectNull(catalogAttrType("hive_metastore").AttrTypes)
	if h := cat.HiveMetastore; h != nil {
		m.HiveMetastore = objectValue(ctx, diags, catalogAttrType("hive_metastore"), hiveMetastoreModel{URI: types.StringValue(h.URI)})
	}
}

// objectName is the catalog's name.
func (m *catalogResourceModel) objectName() string { return m.Name.ValueString() }
