package workflows

import (
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
)

// Search attributes an operator filters requests by in the Temporal UI.
var (
	SearchOrganization = temporal.NewSearchAttributeKeyKeyword("AssentOrganization")
	SearchKind         = temporal.NewSearchAttributeKeyKeyword("AssentKind")
	SearchStatus       = temporal.NewSearchAttributeKeyKeyword("AssentStatus")
	SearchRisk         = temporal.NewSearchAttributeKeyKeyword("AssentRisk")
	SearchExternalID   = temporal.NewSearchAttributeKeyKeyword("AssentExternalId")
)

// SearchAttributes lists every custom search attribute with its type, for
// registration on a namespace.
func SearchAttributes() map[string]enumspb.IndexedValueType {
	out := map[string]enumspb.IndexedValueType{}
	for _, k := range []temporal.SearchAttributeKeyKeyword{SearchOrganization, SearchKind, SearchStatus, SearchRisk, SearchExternalID} {
		out[k.GetName()] = enumspb.INDEXED_VALUE_TYPE_KEYWORD
	}
	return out
}
