package kafkaoracle

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// LogDirFiles are the files of a log directory a loading broker reads for
// one partition (LogManager.loadLogs): Stage copies them with it.
var LogDirFiles = []string{
	".kafka_cleanshutdown",
	"recovery-point-offset-checkpoint",
	"log-start-offset-checkpoint",
	"replication-offset-checkpoint",
	"meta.properties",
}

// Stage copies the partition directory src into a new log directory
// dst/<name of src's log directory>/, with the files of src's log
// directory a broker reads for it (LogDirFiles), and returns the copy's
// path. Subdirectories of src are not copied.
func Stage(src, dst string) (string, error) {
	src = filepath.Clean(src)
	logDir := filepath.Join(dst, filepath.Base(filepath.Dir(src)))
	part := filepath.Join(logDir, filepath.Base(src))
	if err := os.MkdirAll(part, 0o755); err != nil {
		return "", err
	}
	for _, f := range LogDirFiles {
		if err := copyFile(filepath.Join(filepath.Dir(src), f), filepath.Join(logDir, f)); err != nil && !os.IsNotExist(err) {
			return "", err
		}
	}
	if err := CopyDir(src, part); err != nil {
		return "", err
	}
	return part, nil
}

// CopyDir copies the regular files of src into dst (which must exist).
func CopyDir(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if err := copyFile(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", src, err)
	}
	return out.Close()
}
