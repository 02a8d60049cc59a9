//go:build !race

package model_test

const raceOn = false
