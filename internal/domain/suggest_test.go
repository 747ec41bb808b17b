package domain_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
)

func TestSuggest(t *testing.T) {
	t.Parallel()

	receivers := []string{"WMS", "ARCHIVE", "DROPBOX", "SINK"}
	require.Equal(t, "WMS", domain.Suggest("wms", receivers), "case only")
	require.Equal(t, "ARCHIVE", domain.Suggest("ARCHVE", receivers), "one edit")
	require.Equal(t, "DROPBOX", domain.Suggest("dropbx", receivers), "case and an edit")
	require.Empty(t, domain.Suggest("CRM", receivers), "nothing close")
	require.Empty(t, domain.Suggest("WMS", nil))
	require.Equal(t, " (did you mean SINK?)", domain.DidYouMean("SNK", receivers))
	require.Empty(t, domain.DidYouMean("BILLING", receivers))
}
