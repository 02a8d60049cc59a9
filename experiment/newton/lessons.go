package newton

import "embed"

// lessons are the family's built-in lessons, the Markdown files of lessons/.
//
//go:embed lessons/*.md
var lessons embed.FS
