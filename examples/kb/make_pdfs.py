"""Regenerate the example PDFs (datasheet-lumen-pro.pdf, quick-start.pdf) with reportlab.

Run from anywhere: `python examples/kb/make_pdfs.py`. Output is deterministic (invariant mode), so
re-running it leaves the committed files unchanged.
"""

from __future__ import annotations

from pathlib import Path

from reportlab.lib.pagesizes import A4
from reportlab.pdfgen.canvas import Canvas

HERE = Path(__file__).resolve().parent
Page = tuple[str, list[str]]

DATASHEET: list[Page] = [
    (
        "Lumen Pro (LM-300) Datasheet",
        [
            "Revision C, March 2026. Halvard Instruments AS, Bergen, Norway.",
            "The Lumen Pro is a solar-powered outdoor sensor array for the Lumen Hub.",
            "It measures temperature, humidity, pressure, rain, wind and UV.",
            "Page 2: sensors. Page 3: power and radio. Page 4: environment and compliance.",
        ],
    ),
    (
        "Sensors",
        [
            "Temperature: -40 to +60 degrees Celsius, accuracy 0.2 degrees Celsius.",
            "Humidity: 1 to 99 % RH, accuracy 2 % RH.",
            "Pressure: 300 to 1100 hPa, accuracy 0.5 hPa.",
            "Wind speed: 0 to 65 m/s, ultrasonic, no moving parts.",
            "Wind direction: 0 to 359 degrees, resolution 1 degree.",
            "Rain: tipping bucket, 0.2 mm per tip.",
            "UV index: 0 to 16.",
        ],
    ),
    (
        "Power and radio",
        [
            "Solar panel: 2.5 W monocrystalline.",
            "Energy store: 10 F supercapacitor, no battery to replace.",
            "Dark runtime: the array keeps running for 7 days without sun.",
            "Radio: 868 MHz in Europe, 915 MHz in North America.",
            "Transmit interval: every 16 seconds.",
            "For the line-of-sight range, see the models table.",
        ],
    ),
    (
        "Environment and compliance",
        [
            "Enclosure: IP66.",
            "Operating temperature: -40 to +60 degrees Celsius.",
            "Weight: 1.9 kg including the pole clamp.",
            "Certifications: CE, UKCA, FCC ID 2BLUM-LM300.",
        ],
    ),
]

QUICK_START: list[Page] = [
    (
        "Lumen Quick Start: What is in the box",
        [
            "1 sensor array, 1 Lumen Hub, 1 pole clamp for poles 25 to 50 mm in diameter,",
            "1 USB-C cable (1.5 m) and 4 stainless steel screws.",
            "Keep the bottom label of the hub: it carries the setup Wi-Fi password.",
        ],
    ),
    (
        "Lumen Quick Start: First steps",
        [
            "Plug in the hub. It opens a setup Wi-Fi network named Lumen-Setup-XXXX,",
            "where XXXX are the last four characters of the hub serial number.",
            "Join that network with the password from the bottom label, then open the app.",
            "The hub display shows READY when the sensor array is paired.",
        ],
    ),
]


def write_pdf(path: Path, title: str, pages: list[Page]) -> None:
    """Write one text page per entry, each with a heading and lines of body text."""
    canvas = Canvas(str(path), pagesize=A4, invariant=True)
    canvas.setTitle(title)
    canvas.setAuthor("Halvard Instruments AS")
    _, height = A4
    for heading, lines in pages:
        canvas.setFont("Helvetica-Bold", 16)
        canvas.drawString(72, height - 72, heading)
        canvas.setFont("Helvetica", 11)
        for i, line in enumerate(lines):
            canvas.drawString(72, height - 110 - 18 * i, line)
        canvas.showPage()
    canvas.save()


def main() -> None:
    """Generate both example PDFs next to this script."""
    write_pdf(HERE / "datasheet-lumen-pro.pdf", "Lumen Pro (LM-300) Datasheet", DATASHEET)
    write_pdf(HERE / "quick-start.pdf", "Lumen Quick Start", QUICK_START)


if __name__ == "__main__":
    main()
