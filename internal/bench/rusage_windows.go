//go:build windows

package bench

import (
	"time"

	"golang.org/x/sys/windows"
)

// cpuTime is the user and kernel time this process has used.
func cpuTime() time.Duration {
	var creation, exit, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(windows.CurrentProcess(), &creation, &exit, &kernel, &user); err != nil {
		return 0
	}
	return filetimeDuration(kernel) + filetimeDuration(user)
}

// filetimeDuration reads a FILETIME that holds a span of time (in 100 ns
// units), not a date: Filetime.Nanoseconds would subtract the epoch.
func filetimeDuration(ft windows.Filetime) time.Duration {
	return time.Duration(int64(ft.HighDateTime)<<32|int64(ft.LowDateTime)) * 100
}
