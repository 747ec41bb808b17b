package domain

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFieldError(t *testing.T) {
	err := FieldErr(ErrInvalid, "EO_INBOUND_PARALLEL needs ", "sub", ` SENDER, not "x"`, "a hint")
	require.ErrorIs(t, err, ErrInvalid)
	require.Equal(t, `EO_INBOUND_PARALLEL needs sub SENDER, not "x"`, err.Error(), "the API's words")
	require.Equal(t, `EO_INBOUND_PARALLEL needs --sub SENDER, not "x"`, RenderFields(err, Flag), "the CLI's words")
	require.Equal(t, "a hint", HintOf(err))

	wrapped := fmt.Errorf("tune set: %w", err)
	require.Equal(t, `tune set: EO_INBOUND_PARALLEL needs --sub SENDER, not "x"`, RenderFields(wrapped, Flag))
	plain := errors.New("queues went wrong")
	require.Equal(t, "queues went wrong", RenderFields(plain, Flag))

	require.Equal(t, "--delivered-before", Flag("delivered_before"))

	// As a client reads the server's message: the field where it stands as a word.
	got := ParseFieldError(ErrInvalid, `subqueues sub "500" must be`, "sub", "h")
	require.ErrorIs(t, got, ErrInvalid)
	require.Equal(t, `subqueues --sub "500" must be`, RenderFields(got, Flag))
	require.Equal(t, "h", HintOf(got))
	got = ParseFieldError(ErrInvalid, `queues "500" must be`, "queues", "")
	require.Equal(t, `--queues "500" must be`, RenderFields(got, Flag))
	got = ParseFieldError(ErrNotFound, "nothing named here", "queues", "")
	require.ErrorIs(t, got, ErrNotFound)
	require.Equal(t, "nothing named here", RenderFields(got, Flag))
}
