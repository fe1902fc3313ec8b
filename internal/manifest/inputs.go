package manifest

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// manifestExtensions are the file endings read when walking a folder. A file
// named explicitly is read whatever its ending.
var manifestExtensions = map[string]bool{".yaml": true, ".yml": true, ".json": true}

// ExpandInputs turns command-line inputs into the list of sources to read:
// folders become their manifest files (recursively, sorted), "-" stays as
// standard input, and a missing path is an error naming it.
func ExpandInputs(inputs []string) ([]string, error) {
	var out []string
	for _, in := range inputs {
		if in == StdinName {
			out = append(out, in)
			continue
		}
		info, err := os.Stat(in)
		if err != nil {
			return nil, fmt.Errorf("input %s: %w", in, err)
		}
		if !info.IsDir() {
			out = append(out, in)
			continue
		}
		var found []string
		err = filepath.WalkDir(in, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path != in && strings.HasPrefix(d.Name(), ".") {
					return filepath.SkipDir // .git and friends
				}
				return nil
			}
			if manifestExtensions[strings.ToLower(filepath.Ext(path))] {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("input %s: %w", in, err)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

// Walk reads every document of every input in order and calls visit for
// each. stdin is read when an input is "-".
func Walk(inputs []string, stdin io.Reader, visit func(*Document) error) error {
	sources, err := ExpandInputs(inputs)
	if err != nil {
		return err
	}
	for _, source := range sources {
		if err := walkSource(source, stdin, visit); err != nil {
			return err
		}
	}
	return nil
}

func walkSource(source string, stdin io.Reader, visit func(*Document) error) error {
	if source == StdinName {
		if stdin == nil {
			return &ParseError{Source: source, Err: fmt.Errorf("no standard input")}
		}
		return ParseStream(source, stdin, visit)
	}
	f, err := os.Open(source)
	if err != nil {
		return &ParseError{Source: source, Err: err}
	}
	defer f.Close()
	return ParseStream(source, f, visit)
}

// ReadAll reads every object of every input. Use Walk for large inputs.
func ReadAll(inputs []string, stdin io.Reader) ([]*Object, error) {
	var objects []*Object
	err := Walk(inputs, stdin, func(d *Document) error {
		objects = append(objects, d.Objects...)
		return nil
	})
	return objects, err
}
