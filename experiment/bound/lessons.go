package bound

import (
	"embed"
	"io/fs"
)

//go:embed lessons/*.md
var lessonFiles embed.FS

// lessons are the family's built-in lessons (the .md files of lessons/).
func lessons() fs.FS {
	sub, err := fs.Sub(lessonFiles, "lessons")
	if err != nil {
		panic("bound: " + err.Error()) // the embed pattern guarantees the folder
	}
	return sub
}
